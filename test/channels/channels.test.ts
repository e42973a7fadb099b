import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { context as otelContext, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { z } from "zod";
import { WebSocket } from "undici";
import { App, RpcError } from "trellis";
import { schema } from "trellis/schema";
import { serve, type RunningServer } from "trellis/node";
import { createClient } from "trellis/client";
import { testApp, type TestApp, type TestAppInput } from "trellis/testing";
import { openSocket, rawUpgrade, textFrame, type TestSocket } from "../support/channel-socket.js";

const v1 = schema("1").auth().build();

const METRICS_TOKEN = "metrics-token-for-tests";
const message = z.object({ text: z.string().min(1).max(500) });

/** Short intervals and small limits, so each rule shows within a second. */
function createApp({ db, secret }: TestAppInput) {
  return new App({ db, baseUrl: "http://localhost:3000", telemetry: { metrics: { token: METRICS_TOKEN } } })
    .schema(v1)
    .auth({ secret, emailAndPassword: { enabled: true } })
    .admin({ ui: false })
    .channels(
      {
        "room:{roomId}": { join: "authenticated", presence: true, events: { message, typing: z.object({ on: z.boolean() }) } },
        "lobby": { join: "public", events: { hello: z.object({ name: z.string() }) } },
        "vip:{id}": { join: "admin", events: { note: z.string() } },
        "team:{teamId}": { join: ({ user, params }) => user?.name === params.teamId, events: { note: z.string() } },
        "news:{topic}": { join: "public", send: false, events: { story: z.object({ title: z.string() }) } },
      },
      {
        revalidateMs: 150,
        heartbeatMs: 150,
        presenceFlushMs: 20,
        limits: { maxPayloadBytes: 2_048, messagesPerSecond: 30, channelsPerConnection: 4, presenceKeys: 3, connectionsPerCaller: 4, sendBufferBytes: 65_536 },
      },
    )
    .procedure("announce", (base) =>
      base.input(z.object({ room: z.string(), text: z.string() })).handler(({ input, context }) => {
        context.channels.publish(`room:${input.room}`, "message", { text: input.text });
        return "sent";
      }),
    )
    .procedure("shout", (base) =>
      base.handler(({ context }) => {
        context.channels.publish("news:big", "story", { title: "x".repeat(4_000) });
      }),
    );
}

let t: TestApp<typeof createApp>;
let server: RunningServer;
const cookieOf = (actor: { headers: Headers }) => actor.headers.get("cookie")!;
const sockets: TestSocket[] = [];
const open = async (options: Parameters<typeof openSocket>[1] = {}) => {
  const socket = await openSocket(server.url, options);
  sockets.push(socket);
  return socket;
};
const joined = (socket: TestSocket, channel: string) => socket.next((f) => (f.type === "joined" || f.type === "error") && f.channel === channel, 3_000, `join ${channel}`);

const spans = new InMemorySpanExporter();

beforeAll(async () => {
  otelContext.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }));
  t = await testApp(createApp);
  server = await serve(t.app, { port: 0, hostname: "127.0.0.1", handleSignals: false });
}, 60_000);
afterAll(async () => {
  for (const socket of sockets) socket.close();
  await server?.close();
  await t?.close();
});

describe("channels over a real socket", () => {
  it("joins under the rules: 401 signed out, 403 without the role or when the function says no, 404 for no channel", async () => {
    const anonymous = await open();
    anonymous.send({ type: "join", channel: "room:1" });
    expect(await joined(anonymous, "room:1")).toMatchObject({ type: "error", code: "UNAUTHORIZED", status: 401, message: 'Sign in to join "room:1"' });
    anonymous.send({ type: "join", channel: "lobby" });
    expect(await joined(anonymous, "lobby")).toMatchObject({ type: "joined" });
    anonymous.send({ type: "join", channel: "nowhere:1" });
    expect(await anonymous.next((f) => f.type === "error" && f.channel === "nowhere:1")).toMatchObject({ status: 404, message: 'No channel matches "nowhere:1"' });

    const ada = await t.signUp({ name: "red" });
    const socket = await open({ cookie: cookieOf(ada) });
    socket.send({ type: "join", channel: "room:1" });
    expect(await joined(socket, "room:1")).toMatchObject({ type: "joined" });
    socket.send({ type: "join", channel: "vip:1" });
    expect(await joined(socket, "vip:1")).toMatchObject({ status: 403, code: "FORBIDDEN", message: "Requires one of the roles: admin" });
    socket.send({ type: "join", channel: "team:blue" });
    expect(await joined(socket, "team:blue")).toMatchObject({ status: 403, message: 'Permission denied on "team:blue"' });
    socket.send({ type: "join", channel: "team:red" });
    expect(await joined(socket, "team:red")).toMatchObject({ type: "joined" });
    // A page of the app's own baseUrl may open a socket with the caller's cookie (a foreign one may not: see limits).
    const fromBaseUrl = await rawUpgrade(server.url, { cookie: cookieOf(ada), origin: "http://localhost:3000" });
    expect(fromBaseUrl.status).toBe(101);
    fromBaseUrl.socket.destroy();

    const admin = await t.asAdmin();
    const adminSocket = await open({ cookie: cookieOf(admin) });
    adminSocket.send({ type: "join", channel: "vip:1" });
    expect(await joined(adminSocket, "vip:1")).toMatchObject({ type: "joined" });
  });

  it("sends to the other members under the send rule and the event's schema", async () => {
    const [ada, bob] = [await t.signUp(), await t.signUp()];
    const a = await open({ cookie: cookieOf(ada) });
    const b = await open({ cookie: cookieOf(bob) });
    for (const socket of [a, b]) {
      socket.send({ type: "join", channel: "room:send" });
      await joined(socket, "room:send");
    }
    a.send({ type: "send", channel: "room:send", event: "message", payload: { text: "hi" }, ref: 1 });
    expect(await a.next((f) => f.ref === 1)).toEqual({ type: "ok", channel: "room:send", ref: 1 });
    // Named by the sender's connection key, the key its presence would carry.
    expect(await b.next((f) => f.type === "message")).toEqual({ type: "message", channel: "room:send", event: "message", payload: { text: "hi" }, from: a.frames[0]!.id });
    // The sender does not hear its own message.
    expect(a.frames.some((f) => f.type === "message")).toBe(false);

    a.send({ type: "send", channel: "room:send", event: "message", payload: { text: "" }, ref: 2 });
    expect(await a.next((f) => f.ref === 2)).toMatchObject({ type: "error", status: 400, code: "BAD_REQUEST", message: 'Invalid payload for "message": text: Too small: expected string to have >=1 characters' });
    a.send({ type: "send", channel: "room:send", event: "shout", payload: {}, ref: 3 });
    expect(await a.next((f) => f.ref === 3)).toMatchObject({ status: 400, message: 'Unknown event "shout"; known: message, typing' });
    a.send({ type: "send", channel: "room:other", event: "message", payload: { text: "x" }, ref: 4 });
    expect(await a.next((f) => f.ref === 4)).toMatchObject({ status: 400, message: 'Join "room:other" first' });
    a.send({ type: "join", channel: "news:local" });
    await joined(a, "news:local");
    a.send({ type: "send", channel: "news:local", event: "story", payload: { title: "x" }, ref: 5 });
    expect(await a.next((f) => f.ref === 5)).toMatchObject({ status: 403, message: 'Clients may not send on "news:local"' });
    a.send({ type: "nonsense" } as never);
    expect(await a.next((f) => f.type === "error" && f.message.startsWith("Unknown frame"))).toMatchObject({ status: 400 });
  });

  it("publishes from a procedure through context.channels, to the typed client", async () => {
    const ada = await t.signUp();
    const client = createClient<typeof t.app.router & { "~channels": any }>({ url: server.url, headers: { cookie: cookieOf(ada) }, channels: { WebSocket } }) as any;
    const room = client.channel("room:pub");
    await room.joined;
    const got = new Promise((resolve) => room.on("message", (payload: unknown, meta: unknown) => resolve([payload, meta])));
    const announced = await fetch(`${server.url}/rpc/announce`, { method: "POST", headers: { "content-type": "application/json", cookie: cookieOf(ada) }, body: JSON.stringify({ json: { room: "pub", text: "from the server" } }) });
    expect(announced.status).toBe(200);
    expect(await got).toEqual([{ text: "from the server" }, {}]);
    // A span for the publish, a child of the procedure's, naming the channel and the members it reached.
    const published = spans.getFinishedSpans().find((span) => span.name === "channels.publish" && span.attributes["trellis.channel"] === "room:pub")!;
    expect(published.attributes).toMatchObject({ "trellis.channel.event": "message", "trellis.channel.members": 1 });
    const parent = spans.getFinishedSpans().find((span) => span.spanContext().spanId === published.parentSpanContext?.spanId);
    expect(parent?.name).toBe("announce");
    // An unknown event or an invalid payload is the server's bug: a 400 from publish.
    await expect(room.send("message", { text: "" })).rejects.toMatchObject({ status: 400 });
    await expect(client.channel("vip:9").joined).rejects.toBeInstanceOf(RpcError);
    client.closeChannels();
  });

  it("checks a server publish like a client's: over the payload limit, the procedure answers 413", async () => {
    const response = await fetch(`${server.url}/rpc/shout`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(response.status).toBe(413);
    expect((await response.json()).json).toMatchObject({ code: "PAYLOAD_TOO_LARGE", message: "A payload may be at most 2048 bytes, got 4012" });
  });
});

describe("presence", () => {
  it("syncs, joins and leaves keyed per connection, a killed client and a silent one included", async () => {
    const [ada, bob, cy] = [await t.signUp(), await t.signUp(), await t.signUp()];
    const a = await open({ cookie: cookieOf(ada) });
    a.send({ type: "join", channel: "room:p" });
    await joined(a, "room:p");
    expect(await a.next((f) => f.type === "presence")).toEqual({ type: "presence", channel: "room:p", event: "sync", state: {} });
    a.send({ type: "track", channel: "room:p", state: { name: "ada" } });
    const aId = a.frames[0]!.id;
    expect(await a.next((f) => f.type === "presence" && f.event === "join")).toEqual({ type: "presence", channel: "room:p", event: "join", key: aId, state: { name: "ada" } });

    const b = await open({ cookie: cookieOf(bob) });
    b.send({ type: "join", channel: "room:p" });
    expect(await b.next((f) => f.type === "presence")).toEqual({ type: "presence", channel: "room:p", event: "sync", state: { [aId]: { name: "ada" } } });

    // Updates are coalesced: ten states in a burst arrive as the last one (and are never refused).
    for (let i = 0; i < 40; i++) b.send({ type: "track", channel: "room:p", state: { typing: i } });
    const bId = b.frames[0]!.id;
    const last = await a.next((f) => f.event === "join" && f.key === bId && f.state.typing === 39);
    expect(last.state).toEqual({ typing: 39 });
    expect(a.frames.filter((f) => f.event === "join" && f.key === bId).length).toBeLessThan(10);
    expect(b.frames.some((f) => f.type === "error")).toBe(false);

    // A client whose socket is cut without a close frame leaves at once.
    const raw = await rawUpgrade(server.url, { cookie: cookieOf(cy) });
    expect(raw.status).toBe(101);
    raw.socket.write(textFrame(JSON.stringify({ type: "join", channel: "room:p" })));
    raw.socket.write(textFrame(JSON.stringify({ type: "track", channel: "room:p", state: { name: "cy" } })));
    const cyJoin = await a.next((f) => f.event === "join" && f.state?.name === "cy");
    raw.socket.destroy();
    expect(await a.next((f) => f.event === "leave" && f.key === cyJoin.key, 1_000, "cy's leave")).toBeTruthy();

    // A client that stops answering heartbeats is cut after two intervals (150 ms here) and leaves.
    const silent = await open({ cookie: cookieOf(cy), silent: true });
    silent.send({ type: "join", channel: "room:p" });
    silent.send({ type: "track", channel: "room:p", state: { name: "quiet" } });
    const quiet = await a.next((f) => f.event === "join" && f.state?.name === "quiet");
    const startedAt = Date.now();
    expect(await a.next((f) => f.event === "leave" && f.key === quiet.key, 2_000, "the silent client's leave")).toBeTruthy();
    expect(Date.now() - startedAt).toBeLessThan(1_000);

    b.send({ type: "untrack", channel: "room:p" });
    expect(await a.next((f) => f.event === "leave" && f.key === bId)).toBeTruthy();
  });
});

describe("limits", () => {
  it("refuses oversized payloads, floods, too many channels, presence keys and connections with clear errors", async () => {
    const ada = await t.signUp();
    const a = await open({ cookie: cookieOf(ada) });
    a.send({ type: "join", channel: "room:l" });
    await joined(a, "room:l");
    a.send({ type: "send", channel: "room:l", event: "message", payload: { text: "x".repeat(3_000) }, ref: "big" });
    expect(await a.next((f) => f.ref === "big")).toMatchObject({ status: 413, code: "PAYLOAD_TOO_LARGE", message: "A payload may be at most 2048 bytes, got 3011" });

    for (let i = 0; i < 40; i++) a.send({ type: "send", channel: "room:l", event: "typing", payload: { on: true } });
    expect(await a.next((f) => f.status === 429)).toMatchObject({ code: "TOO_MANY_REQUESTS", message: "At most 30 frames per second per connection; this one was dropped" });

    // A fresh connection of the same caller: its own frame budget.
    const c = await open({ cookie: cookieOf(ada) });
    for (const channel of ["room:l2", "room:l3", "room:l4", "room:keys"]) c.send({ type: "join", channel });
    c.send({ type: "join", channel: "room:l5" });
    expect(await joined(c, "room:l5")).toMatchObject({ status: 429, message: "A connection may be in at most 4 channels" });

    // Presence keys are per connection: the caller's third and fourth connections fill the channel's three.
    const trackers = [c, await open({ cookie: cookieOf(ada) }), await open({ cookie: cookieOf(ada) })];
    for (const socket of trackers.slice(1)) socket.send({ type: "join", channel: "room:keys" });
    for (const socket of trackers) socket.send({ type: "track", channel: "room:keys", state: {}, ref: "t" });
    const answers = await Promise.all(trackers.map((socket) => socket.next((f) => f.ref === "t")));
    expect(answers.filter((f) => f.type === "ok")).toHaveLength(3);
    const fourth = await open({ cookie: cookieOf(await t.signUp()) });
    fourth.send({ type: "join", channel: "room:keys" });
    fourth.send({ type: "track", channel: "room:keys", state: {}, ref: "t" });
    expect(await fourth.next((f) => f.ref === "t")).toMatchObject({ status: 429, message: '"room:keys" already tracks 3 presence keys' });

    // The caller holds four connections: a fifth upgrade is refused with a plain 429.
    expect((await rawUpgrade(server.url, { cookie: cookieOf(ada) })).status).toBe(429);
    // A cookie sent from a foreign page is refused before any socket opens.
    expect((await rawUpgrade(server.url, { cookie: cookieOf(ada), origin: "https://evil.example" })).status).toBe(403);
  });

  it("drops a consumer that does not read instead of buffering without bound", async () => {
    const reader = await rawUpgrade(server.url);
    reader.socket.write(textFrame(JSON.stringify({ type: "join", channel: "news:flood" })));
    await new Promise((resolve) => setTimeout(resolve, 100));
    reader.socket.pause();
    let ended = false;
    const closed = new Promise((resolve) => reader.socket.once("close", () => resolve((ended = true))));
    const channels = t.app.sealed.service("channels")!;
    const members = () => channels.stats().channels.find((room) => room.channel === "news:flood")?.members ?? 0;
    expect(members()).toBe(1);
    for (let i = 0; i < 4_000 && !ended && members() > 0; i++) {
      channels.publish("news:flood", "story", { title: "y".repeat(1_500) });
      if (i % 100 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    // Cut once its unsent bytes passed sendBufferBytes (64 KB here), long before 6 MB were queued for it.
    expect(members()).toBe(0);
    reader.socket.resume();
    await closed;
  });
});

describe("revocation", () => {
  it("ends a membership within revalidateMs once the session is revoked", async () => {
    const ada = await t.signUp();
    const socket = await open({ cookie: cookieOf(ada) });
    socket.send({ type: "join", channel: "room:r" });
    socket.send({ type: "join", channel: "lobby" });
    await joined(socket, "room:r");
    const signOut = await t.app.handle(new Request("http://localhost:3000/api/auth/sign-out", { method: "POST", headers: ada.headers }));
    expect(signOut.status).toBe(200);
    const left = await socket.next((f) => f.type === "left", 1_000, "the revoked membership's end");
    expect(left).toEqual({ type: "left", channel: "room:r", code: "UNAUTHORIZED", status: 401, message: 'Sign in to join "room:r"' });
    // A public channel stays joined.
    expect(socket.frames.some((f) => f.type === "left" && f.channel === "lobby")).toBe(false);
  });

  it("ends it on a ban, and on a lost role, with the rule's own status", async () => {
    const [bob, admin] = [await t.signUp(), await t.asAdmin()];
    const bobSocket = await open({ cookie: cookieOf(bob) });
    const adminSocket = await open({ cookie: cookieOf(admin) });
    bobSocket.send({ type: "join", channel: "room:b" });
    adminSocket.send({ type: "join", channel: "vip:b" });
    await joined(bobSocket, "room:b");
    await joined(adminSocket, "vip:b");
    await t.app.db.updateTable("user" as never).set({ banned: true } as never).where("id" as never, "=", bob.user.id as never).execute();
    await t.app.db.updateTable("user" as never).set({ role: "user" } as never).where("id" as never, "=", admin.user.id as never).execute();
    expect(await bobSocket.next((f) => f.type === "left", 1_000, "the banned user's end")).toMatchObject({ channel: "room:b", status: 401 });
    expect(await adminSocket.next((f) => f.type === "left", 1_000, "the demoted admin's end")).toMatchObject({ channel: "vip:b", status: 403, message: "Requires one of the roles: admin" });
  });
});

describe("visibility", () => {
  it("lists channels in _admin and counts them in /metrics", async () => {
    const admin = await t.asAdmin();
    const socket = await open({ cookie: cookieOf(admin) });
    socket.send({ type: "join", channel: "room:seen" });
    await joined(socket, "room:seen");
    const stats = await admin.client._admin.channels.list();
    expect(stats.transport).toBe("local");
    expect(stats.channels).toContainEqual({ channel: "room:seen", members: 1, presence: 0 });
    expect(stats.connections).toBeGreaterThan(0);
    await expect((await t.signUp()).client._admin.channels.list()).rejects.toMatchObject({ status: 403 });

    const metrics = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    expect(metrics).toMatch(new RegExp(`^trellis_channel_connections ${stats.connections}$`, "m"));
    expect(metrics).toMatch(/^trellis_channel_messages_delivered_total \d+$/m);
  });
});

describe("SSE and POST", () => {
  it("streams the same frames and takes frames as POSTs, with HTTP statuses for refusals", async () => {
    const ada = await t.signUp();
    expect((await fetch(`${server.url}/channels/sse?channel=room:s`)).status).toBe(401);
    expect((await fetch(`${server.url}/channels/sse?channel=bad:s`, { headers: { cookie: cookieOf(ada) } })).status).toBe(404);

    const listener = await open({ cookie: cookieOf(await t.signUp()) });
    listener.send({ type: "join", channel: "room:s" });
    await joined(listener, "room:s");

    const controller = new AbortController();
    const response = await fetch(`${server.url}/channels/sse?channel=room:s`, { headers: { cookie: cookieOf(ada) }, signal: controller.signal });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    const nextFrame = async (): Promise<any> => {
      while (!buffer.includes("\n\n")) buffer += decoder.decode((await reader.read()).value);
      const at = buffer.indexOf("\n\n");
      const event = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      const frame = JSON.parse(event.replace(/^data: /, ""));
      return frame.type === "presence" || frame.type === "ping" ? nextFrame() : frame;
    };
    const ready = await nextFrame();
    expect(ready.type).toBe("ready");
    expect(await nextFrame()).toMatchObject({ type: "joined", channel: "room:s" });

    const post = (frame: unknown, cookie = cookieOf(ada)) =>
      fetch(`${server.url}/channels/sse/${ready.token}`, { method: "POST", headers: { cookie, "content-type": "application/json" }, body: JSON.stringify(frame) });
    expect((await post({ type: "send", channel: "room:s", event: "message", payload: { text: "over sse" } })).status).toBe(204);
    expect(await listener.next((f) => f.type === "message")).toMatchObject({ payload: { text: "over sse" } });
    const bad = await post({ type: "send", channel: "room:s", event: "message", payload: { text: 5 } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: "BAD_REQUEST", message: 'Invalid payload for "message": text: Invalid input: expected string, received number' });
    // Another caller cannot drive this stream, and the public id (the presence key) is no way in.
    expect((await post({ type: "leave", channel: "room:s" }, cookieOf(await t.signUp()))).status).toBe(404);
    const byId = await fetch(`${server.url}/channels/sse/${ready.id}`, { method: "POST", headers: { cookie: cookieOf(ada), "content-type": "application/json" }, body: JSON.stringify({ type: "leave", channel: "room:s" }) });
    expect(byId.status).toBe(404);

    listener.send({ type: "send", channel: "room:s", event: "message", payload: { text: "to sse" } });
    expect(await nextFrame()).toEqual({ type: "message", channel: "room:s", event: "message", payload: { text: "to sse" }, from: listener.frames[0]!.id });
    controller.abort();
  });
});

import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { WebSocket } from "undici";
import { App } from "../../presets/trellis.js";
import { createClient } from "../../presets/client.js";
import type { InferRouter } from "../../presets/types.js";
import { serve, type RunningServer } from "../../presets/node.js";
import { sqliteMemory } from "../support/app.js";
import { within } from "../support/within.js";

const createApp = () =>
  new App({ db: sqliteMemory() }).channels({ "room:{id}": { join: "public", presence: true, events: { note: z.object({ text: z.string() }) } } }, { presenceFlushMs: 10 });

const servers: RunningServer[] = [];
const start = async (port = 0) => {
  const server = await serve(createApp(), { port, hostname: "127.0.0.1", handleSignals: false, banner: false });
  servers.push(server);
  return server;
};
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

describe("the typed client's channels", () => {
  it("receives a message intact at every frame length: a one-byte length, a 16-bit one and a 64-bit one", async () => {
    const server = await start();
    const options = { url: server.url, channels: { WebSocket } };
    const ada = createClient<InferRouter<ReturnType<typeof createApp>>>(options);
    const bob = createClient<InferRouter<ReturnType<typeof createApp>>>(options);
    const adaRoom = ada.channel("room:sizes");
    const bobRoom = bob.channel("room:sizes");
    await Promise.all([adaRoom.joined, bobRoom.joined]);
    const texts = ["short", "é".repeat(2_000), "x".repeat(100_000)];
    const heard: string[] = [];
    const all = new Promise<void>((resolve) => bobRoom.on("note", ({ text }) => heard.push(text) === texts.length && resolve()));
    for (const text of texts) await adaRoom.send("note", { text });
    await within(all, 5_000, "the three notes");
    expect(heard.map((text) => text.length)).toEqual(texts.map((text) => text.length));
    expect(heard).toEqual(texts);
    ada.closeChannels();
    bob.closeChannels();
  });

  it("sends and receives between two clients, tracks presence, and after the server restarts rejoins and tracks again", async () => {
    const first = await start();
    const options = { url: first.url, channels: { WebSocket } };
    const ada = createClient<InferRouter<ReturnType<typeof createApp>>>(options);
    const bob = createClient<InferRouter<ReturnType<typeof createApp>>>(options);
    const adaRoom = ada.channel("room:1");
    const bobRoom = bob.channel("room:1");
    await Promise.all([adaRoom.joined, bobRoom.joined]);

    const notes: Array<[string, string | undefined]> = [];
    let heard: () => void = () => {};
    bobRoom.on("note", (payload, { from }) => {
      notes.push([payload.text, from]);
      heard();
    });
    const once = () => new Promise<void>((resolve) => (heard = resolve));
    let arrived = once();
    await adaRoom.send("note", { text: "hello" });
    await within(arrived, 2_000, "ada's note");
    expect(notes).toEqual([["hello", adaRoom.key()]]);

    const present = (room: typeof bobRoom, name: string) =>
      new Promise<void>((resolve) => {
        const check = () => Object.values(room.presence()).some((state) => (state as { name?: string }).name === name) && resolve();
        room.onPresence(check);
        check();
      });
    await adaRoom.track({ name: "ada" });
    await within(present(bobRoom, "ada"), 2_000, "ada's presence on bob");

    // The server goes away and comes back on the same port: both clients reconnect, rejoin, and
    // ada's presence is tracked again without her asking.
    const { port } = new URL(first.url);
    const cleared = new Promise<void>((resolve) => bobRoom.onPresence((state) => Object.keys(state).length === 0 && resolve()));
    await first.close();
    // While the socket is down the client knows nobody is here, rather than keeping a stale list.
    await within(cleared, 2_000, "bob's presence cleared by the disconnect");
    const second = await start(Number(port));
    await within(present(bobRoom, "ada"), 5_000, "ada's presence after the restart");
    arrived = once();
    second.app.sealed.service("channels")!.publish("room:1" as never, "note" as never, { text: "after" } as never);
    await within(arrived, 2_000, "the server's note after the restart");
    expect(notes.at(-1)).toEqual(["after", undefined]);

    // A refused join rejects `joined`; an invalid send rejects with the server's 400.
    await expect(ada.channel("nowhere" as never).joined).rejects.toMatchObject({ status: 404 });
    await expect(adaRoom.send("note", { text: 5 } as never)).rejects.toMatchObject({ status: 400 });
    ada.closeChannels();
    bob.closeChannels();
  });
});

describe(".channels() refuses a malformed definition at the call", () => {
  it("names every problem under CHANNELS_INVALID", () => {
    const app = () => new App({ db: sqliteMemory() });
    const events = { note: z.string() };
    expect(() => app().channels({ "room {id}": { events } })).toThrow(expect.objectContaining({ code: "CHANNELS_INVALID", message: '.channels(): the pattern "room {id}" may only hold letters, digits, ":_-.@" and {parameters}' }));
    expect(() => app().channels({ "room:{id}": {} as never })).toThrow('.channels(): the channel "room:{id}" needs events: { name: zodSchema }');
    expect(() => app().channels({ "room:{id}": { events } }, { heartbeatMs: 0, limits: { maxPayloadBytes: 1.5 } })).toThrow(
      ".channels(): maxPayloadBytes must be a whole number above 0, got 1.5; heartbeatMs must be a whole number above 0, got 0",
    );
  });
});

describe("changes on a channel", () => {
  it("publishes each committed row, with only the columns named, on the channel its row names", async () => {
    const { schema } = await import("../../kernel/schema/index.js");
    const v1 = schema("1").table("msg", (t) => ({ id: t.serial().primaryKey(), roomId: t.text(), body: t.text(), secret: t.text().nullable() })).build();
    const app = new App({ db: sqliteMemory() })
      .schema(v1)
      .resource("msg", { permissions: { list: "public", get: "public", create: "public", update: "public", delete: "public" } })
      .channels({ "room:{roomId}": { join: "public", events: {}, changes: { table: "msg", columns: ["id", "roomId", "body"] } } });
    const server = await serve(app, { port: 0, hostname: "127.0.0.1", handleSignals: false, banner: false });
    servers.push(server);
    const client = createClient<InferRouter<typeof app>>({ url: server.url, channels: { WebSocket } });
    const room = client.channel("room:a");
    await room.joined;
    const changes: unknown[] = [];
    const arrived = new Promise<void>((resolve) => room.on("change", (change) => changes.push(change) === 2 && resolve()));
    await client.msg.create({ roomId: "b", body: "elsewhere", secret: "x" });
    const row = await client.msg.create({ roomId: "a", body: "here", secret: "never sent" });
    await client.msg.update({ where: { id: row.id }, data: { body: "edited" } });
    await within(arrived, 2_000, "the room's two changes");
    expect(changes).toEqual([
      { op: "insert", row: { id: row.id, roomId: "a", body: "here" } },
      { op: "update", row: { id: row.id, roomId: "a", body: "edited" } },
    ]);
    client.closeChannels();

    expect(() => new App({ db: sqliteMemory() }).schema(v1).channels({ "room:{room}": { events: {}, changes: { table: "msg", columns: ["id", "nope"] } } }).build()).toThrow(
      '"room:{room}" names the column "nope", which "msg" lacks; "room:{room}" names the column "room", which "msg" lacks; "room:{room}": the parameter "room" must be among the columns sent',
    );
  });
});

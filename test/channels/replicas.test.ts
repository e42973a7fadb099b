import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { z } from "zod";
import { postgresDialect, postgresLive } from "../../kernel/db/dialect/entry.js";
import { App } from "../../presets/trellis.js";
import { serve, type RunningServer } from "../../presets/node.js";
import { sqliteMemory } from "../support/app.js";
import { hasRedis, openRedis } from "../support/redis.js";
import { openSocket, type TestSocket } from "../support/channel-socket.js";

const url = process.env.DATABASE_URL;
if (!url) console.log("skipping channel replica tests on PostgreSQL: DATABASE_URL is not set");

const definitions = {
  "room:{roomId}": { join: "public", presence: true, events: { message: z.object({ text: z.string() }) } },
} as const;

/** A replica: the channels and a procedure that publishes from the server. */
const replica = (db: ConstructorParameters<typeof App>[0]["db"], config: Parameters<App["channels"]>[1] = {}, name = "replicas") =>
  // The silent replica's failed publishes are reported; these tests read the frames instead.
  new App({ name, db, onError: () => {} })
    .channels(definitions, { presenceFlushMs: 10, heartbeatMs: 200, ...config })
    .procedure("shout", (base) =>
      base.input(z.object({ room: z.string(), text: z.string() })).handler(({ input, context }) => void context.channels.publish(`room:${input.room}`, "message", { text: input.text })),
    );

const sockets: TestSocket[] = [];
const join = async (server: RunningServer, channel: string) => {
  const socket = await openSocket(server.url);
  sockets.push(socket);
  socket.send({ type: "join", channel });
  await socket.next((f) => f.type === "joined");
  return socket;
};
const shout = (server: RunningServer, room: string, text: string) =>
  fetch(`${server.url}/rpc/shout`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ json: { room, text } }) });

/** The checks both transports pass: messages both ways, presence seen across, a replica's exit cleaning its presence. */
function acrossReplicas(servers: () => RunningServer[], bigText: number) {
  it("a message sent on one replica reaches members on the other, server publishes too", async () => {
    const [a, b] = servers();
    const onA = await join(a!, "room:x");
    const onB = await join(b!, "room:x");
    onA.send({ type: "send", channel: "room:x", event: "message", payload: { text: "from a" }, from: onA.frames[0]!.id });
    expect(await onB.next((f) => f.type === "message")).toEqual({ type: "message", channel: "room:x", event: "message", payload: { text: "from a" }, from: onA.frames[0]!.id });
    expect((await shout(b!, "x", "x".repeat(bigText))).status).toBe(200);
    expect((await onA.next((f) => f.type === "message")).payload.text).toHaveLength(bigText);
  });

  it("presence crosses replicas, and a replica that exits takes its entries with it", async () => {
    const [a, b, c] = servers();
    const onA = await join(a!, "room:p");
    onA.send({ type: "track", channel: "room:p", state: { name: "ada" } });
    const onB = await join(b!, "room:p");
    const seen = await onB.next((f) => f.type === "presence" && (f.event === "join" || Object.keys(f.state ?? {}).length > 0), 3_000, "ada's presence on b");
    expect(JSON.stringify(seen)).toContain("ada");
    const onC = await join(c!, "room:p");
    onC.send({ type: "track", channel: "room:p", state: { name: "cy" } });
    const cy = await onB.next((f) => f.event === "join" && f.state.name === "cy", 3_000, "cy's join on b");
    await c!.close();
    expect(await onB.next((f) => f.event === "leave" && f.key === cy.key, 3_000, "cy's leave once its replica exited")).toBeTruthy();
  });
}

describe.runIf(url)("channels across PostgreSQL replicas (LISTEN/NOTIFY)", () => {
  const schemaName = `channels_${Date.now().toString(36)}`;
  const pools: pg.Pool[] = [];
  let servers: RunningServer[] = [];
  beforeAll(async () => {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`create schema ${schemaName}`);
    await admin.end();
    const start = () => {
      const pool = new pg.Pool({ connectionString: url, max: 3, options: `-c search_path=${schemaName}` });
      pools.push(pool);
      return serve(replica({ dialect: postgresDialect({ pool }), kind: "postgres", live: postgresLive({ pool }) }), { port: 0, hostname: "127.0.0.1", handleSignals: false });
    };
    servers = await Promise.all([start(), start(), start()]);
  }, 30_000);
  afterAll(async () => {
    for (const socket of sockets) socket.close();
    await Promise.all(servers.map((server) => server.close()));
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`drop schema if exists ${schemaName} cascade`);
    await admin.end();
  });
  // 20,000 bytes: over NOTIFY's 8,000, so it travels by reference.
  acrossReplicas(() => servers, 20_000);
});

describe.runIf(hasRedis("channel replica tests on Redis"))("channels across Redis replicas (pub/sub)", () => {
  const clients: ReturnType<typeof openRedis>[] = [];
  let servers: RunningServer[] = [];
  beforeAll(async () => {
    const name = `replicas-${randomBytes(3).toString("hex")}`;
    const start = () => {
      const redis = openRedis();
      clients.push(redis);
      return serve(replica(sqliteMemory(), { redis }, name), { port: 0, hostname: "127.0.0.1", handleSignals: false });
    };
    servers = await Promise.all([start(), start(), start(), start()]);
  });
  afterAll(async () => {
    for (const socket of sockets) socket.close();
    await Promise.all(servers.map((server) => server.close()));
    await Promise.allSettled(clients.map((client) => client.quit()));
  });
  acrossReplicas(() => servers, 100_000);

  it("forgets the presence of a replica that dies without a word, after three of its heartbeats", async () => {
    const [, b, , d] = servers;
    const onD = await join(d!, "room:dead");
    onD.send({ type: "track", channel: "room:dead", state: { name: "doomed" } });
    const onB = await join(b!, "room:dead");
    const seen = await onB.next((f) => f.type === "presence" && JSON.stringify(f).includes("doomed"), 3_000, "d's presence on b");
    const key = seen.key ?? Object.keys(seen.state)[0];
    // d can no longer publish (its heartbeats stop) but its socket and members stay: as a frozen process would.
    clients[3]!.disconnect();
    const cutAt = Date.now();
    expect(await onB.next((f) => f.event === "leave" && f.key === key, 3_000, "the silent replica's entries leaving")).toBeTruthy();
    // Three heartbeats of 200 ms, checked at b's own beat: between 600 and 1,000 ms.
    expect(Date.now() - cutAt).toBeGreaterThanOrEqual(400);
  });
});

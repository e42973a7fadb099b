import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { RpcError } from "../../kernel/index.js";
import { localLive } from "../../kernel/db/dialect/entry.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { rpc } from "../support/app.js";
import { openDatabase, type Family, type TestDatabase } from "../support/databases.js";
import { keySessionsOf } from "../support/key-sessions.js";
import { nextSnapshot as next, untilSnapshot } from "../support/snapshots.js";

const v1 = schema("1")
  .table("msg", (t) => ({ id: t.serial().primaryKey(), body: t.text(), room: t.text(), ownerId: t.text().nullable() }))
  .build();

/** Sessions from `x-api-key: <user>`, valid while the user is in `signedIn`. */
const signedIn = new Set<string>();
const sessions = keySessionsOf({ accepts: (id) => signedIn.has(id) });

describe.each<Family>(["pglite", "sqlite"])("live queries on %s", (family) => {
  let database: TestDatabase;
  let built: any;

  beforeAll(async () => {
    database = await openDatabase(family);
    const live = family === "sqlite" ? localLive() : { kind: "pglite" };
    built = new App({ db: { dialect: database.dialect, kind: database.kind, live } })
      .schema(v1)
      .use(sessions)
      .resource("msg", {
        ownerColumn: "ownerId",
        permissions: { list: "owner", create: "authenticated" },
        live: { revalidateMs: 100, max: 3, maxPerCaller: 3 },
      })
      .build();
    await built.migrator.migrateToLatest();
    signedIn.add("ada").add("bob");
  });
  afterAll(async () => {
    await built.close();
    await database.close();
  });

  it("streams snapshots of findMany: first at once, then after each change that affects it, a row leaving the filter included", async () => {
    const controller = new AbortController();
    const stream = built.db.query.msg.live({ where: { room: "a" }, orderBy: [{ id: "asc" }] }, { signal: controller.signal });
    expect((await next(stream)).value).toEqual([]);
    const [row] = await built.db.insertInto("msg").values({ body: "hi", room: "a" }).returning("id").execute();
    expect((await next(stream)).value).toMatchObject([{ body: "hi", room: "a" }]);
    await built.db.insertInto("msg").values({ body: "elsewhere", room: "b" }).execute(); // no change to the result
    await built.db.updateTable("msg").set({ room: "b" }).where("id", "=", row.id).execute();
    expect((await next(stream)).value).toEqual([]);
    controller.abort();
    expect(await next(stream)).toEqual({ done: true, value: undefined });
  });

  it("coalesces: a slow reader gets the newest snapshot, never a backlog", async () => {
    const stream = built.db.query.msg.live({ where: { room: "c" } });
    // The same query, read at once: the two share it, so each snapshot reaches both together.
    const watcher = built.db.query.msg.live({ where: { room: "c" } });
    await next(stream);
    await next(watcher);
    for (let i = 0; i < 5; i++) await built.db.insertInto("msg").values({ body: `m${i}`, room: "c" }).execute();
    await untilSnapshot(watcher, (rows: unknown[]) => rows.length === 5);
    const { value } = await next(stream);
    expect(value).toHaveLength(5);
    await stream.return();
    await watcher.return();
  });

  it("shares identical subscriptions and returns to the baseline after 1,000 subscribe/abort cycles", async () => {
    const baseline = built.sealed.liveStats();
    const a = built.db.query.msg.live({ where: { room: "z" } });
    const b = built.db.query.msg.live({ where: { room: "z" } });
    await Promise.all([next(a), next(b)]);
    expect(built.sealed.liveStats()).toMatchObject({ queries: baseline.queries + 1, subscribers: baseline.subscribers + 2 });
    await a.return();
    await b.return();
    for (let i = 0; i < 1000; i++) {
      const controller = new AbortController();
      const stream = built.db.query.msg.live({ where: { room: `r${i % 7}` } }, { signal: controller.signal });
      if (i % 100 === 0) await next(stream);
      controller.abort();
    }
    // Aborted streams are released as their abort is handled, not all in this tick.
    await vi.waitFor(() => expect(built.sealed.liveStats()).toEqual(baseline), { timeout: 10_000, interval: 20 });
  });

  it("msg.live: 401 signed out and 429 over max before the stream starts; owners see only their rows", async () => {
    const anonymous = await rpc(built, "msg.live", {});
    expect(anonymous.status).toBe(401);

    const client = built.client({ "x-api-key": "ada" });
    const streams = await Promise.all([0, 1, 2, 3].map(() => client.msg.live({ where: { room: "o" } }).catch((error: RpcError<any, any>) => error)));
    const refused = streams.filter((s: unknown) => s instanceof RpcError);
    expect(refused.map((e: RpcError<any, any>) => e.status)).toEqual([429]);
    const open = streams.filter((s: unknown) => !(s instanceof RpcError));
    for (const stream of open) expect((await next(stream)).value).toEqual([]);

    await rpc(built, "msg.create", { body: "bob's secret", room: "o" }, { "x-api-key": "bob" });
    await rpc(built, "msg.create", { body: "ada's", room: "o" }, { "x-api-key": "ada" });
    const { value } = await next(open[0]);
    expect(value).toMatchObject([{ body: "ada's", ownerId: "ada" }]);
    for (const stream of open) await stream.return();
    // Slots came back.
    const again = await client.msg.live({});
    await again.return();
  });

  it("ends an idle stream with 401 within revalidateMs once its session is gone", async () => {
    signedIn.add("cy");
    const stream = await built.client({ "x-api-key": "cy" }).msg.live({});
    await next(stream);
    signedIn.delete("cy");
    // No write follows: only the re-check every revalidateMs (100) can end it. The default (30 s)
    // would not end it within this limit.
    const error = await next(stream, 10_000).catch((e) => e);
    expect(error).toBeInstanceOf(RpcError);
    expect(error.status).toBe(401);
  });
});

describe("live without a provider", () => {
  it("fails the build with a clear error", async () => {
    const database = await openDatabase("sqlite");
    const app = new App({ db: { dialect: database.dialect, kind: "sqlite" } }).schema(v1).resource("msg", { live: true });
    expect(() => app.build()).toThrow(/no live provider/);
    await database.close();
  });
});

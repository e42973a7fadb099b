/**
 * Live queries at scale guarded by counting work: with many distinct owner-scoped subscriptions,
 * one write re-runs exactly the one query it affects, whatever the machine's speed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { definePlugin } from "../../kernel/index.js";
import { localLive } from "../../kernel/db/dialect/entry.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { openDatabase, type Family, type TestDatabase } from "../support/databases.js";
import { keySessions } from "../support/key-sessions.js";

const USERS = 100;
const v1 = schema("1").table("todo", (t) => ({ id: t.serial().primaryKey(), ownerId: t.text(), title: t.text(), done: t.boolean() })).build();

const next = <T>(iterator: AsyncIterator<T>, ms = 20_000) =>
  Promise.race([iterator.next(), new Promise<never>((_, reject) => setTimeout(() => reject(new Error("no snapshot in time")), ms))]);

describe.each<Family>(["pglite", "sqlite"])("live re-runs per write on %s", (family) => {
  const reads: string[] = [];
  let database: TestDatabase;
  let built: any;
  const streams: AsyncIterator<any>[] = [];

  beforeAll(async () => {
    database = await openDatabase(family);
    const counter = definePlugin({
      name: "counter",
      build: (ctx) => ctx.need("instrumentation").add({ statement: (text, run) => (/^\s*select/i.test(text) && /"todo"/.test(text) && reads.push(text), run()) }),
    });
    built = new App({ db: { dialect: database.dialect, kind: database.kind, live: family === "sqlite" ? localLive() : { kind: "pglite" } } })
      .schema(v1)
      .use(keySessions)
      .use(counter)
      .resource("todo", {
        ownerColumn: "ownerId",
        permissions: { list: "owner", create: "authenticated", update: "owner" },
        live: { revalidateMs: false, max: USERS, maxPerCaller: 1 },
      })
      .build();
    await built.migrator.migrateToLatest();
    await built.db
      .insertInto("todo")
      .values(Array.from({ length: USERS }, (_, i) => ({ ownerId: `u${i}`, title: `first of u${i}`, done: family === "sqlite" ? 0 : false })))
      .execute();
    for (let i = 0; i < USERS; i += 20) {
      streams.push(...(await Promise.all(Array.from({ length: 20 }, (_, j) => built.client({ "x-api-key": `u${i + j}` }).todo.live({ where: { done: false }, take: 20 })))));
    }
    await Promise.all(streams.map((stream) => next(stream)));
  }, 240_000);
  afterAll(async () => {
    await Promise.all(streams.map((stream) => stream.return?.()));
    await built.close();
    await database.close();
  });

  it(`${USERS} distinct owner-scoped subscriptions: a write to one user's row re-runs that user's query alone`, async () => {
    expect(built.sealed.liveStats()).toMatchObject({ queries: USERS, subscribers: USERS });
    reads.length = 0;
    const user = 17;
    await built.client({ "x-api-key": `u${user}` }).todo.create({ title: "second", done: false });
    expect((await next(streams[user]!)).value).toHaveLength(2);
    // Anything else re-running would have started by now.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(reads).toHaveLength(1);

    // An update that takes the row out of the filter: one re-run again; a row outside every
    // filter (done, and nobody's query holds it) re-runs nothing.
    const [row] = await built.db.selectFrom("todo").select("id").where("ownerId", "=", `u${user}`).where("title", "=", "second").execute();
    reads.length = 0;
    await built.client({ "x-api-key": `u${user}` }).todo.update({ where: { id: row.id }, data: { done: true } });
    expect((await next(streams[user]!)).value).toHaveLength(1);
    await built.client({ "x-api-key": `u${user}` }).todo.update({ where: { id: row.id }, data: { title: "still done" } });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(reads).toHaveLength(1);
  });
});

/**
 * `_admin.data.list` with cursor pages (`page`, `after`), full-text `search` and vector `nearest`,
 * the meta that tells the dashboard about them, and `search` on the export route: through
 * `handle()`, exact statuses and bodies, the secret-column and credential-table rules included.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { families, openDatabase, type Family, type TestDatabase } from "../support/databases.js";
import { request, rpc, sqliteMemory } from "../support/app.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import type { DatabaseConfig } from "../../kernel/index.js";
import { SECRET } from "./fixture.js";

const notes = schema("1")
  .auth()
  .table("note", (t) => ({
    id: t.serial().primaryKey(),
    title: t.text(),
    body: t.text().nullable(),
    views: t.integer().default(0),
  }))
  .search("note", { title: "A", body: "B" })
  .build();

const vectors = schema("2")
  .extend(notes)
  .table("doc", (t) => ({
    id: t.serial().primaryKey(),
    title: t.text(),
    embedding: t.vector(3).nullable(),
  }))
  .build();

const notesApp = (db: DatabaseConfig, withVectors: boolean) => {
  const app = new App({ name: "Admin search", baseUrl: ORIGIN, db }).schema(notes);
  // Typed as the notes app: the doc table (the embedded database only) is reached untyped.
  return (withVectors ? (app.schema(vectors) as unknown as typeof app) : app).auth({ secret: SECRET, emailAndPassword: { enabled: true } }).admin({ listLimit: { default: 10, max: 20 } });
};

/** A cursor as the kernel writes one (base64url JSON), for forgeries. */
const cursor = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

describe.each(families())("_admin.data.list cursor pages, search and nearest on %s", (family: Family) => {
  let db: TestDatabase;
  let app: Awaited<ReturnType<ReturnType<typeof notesApp>["start"]>>;
  let admin: SignedIn;
  const call = (name: string, input?: unknown) => rpc(app, `_admin.${name}`, input, { cookie: admin.cookie });
  const list = (input: Record<string, unknown>) => call("data.list", { table: "note", ...input });
  const vectorsHere = family === "pglite";

  beforeAll(async () => {
    db = await openDatabase(family);
    app = await notesApp({ dialect: db.dialect, kind: db.kind }, vectorsHere).start();
    admin = await signUp(app, "admin@example.test");
    await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", admin.userId).execute();
    // 25 notes; views repeat (i % 7) so the key breaks ties; every third one mentions "alpha".
    await app.db
      .insertInto("note")
      .values(Array.from({ length: 25 }, (_, i) => ({ title: i === 4 ? "alpha alpha alpha 4" : i % 3 === 0 ? `alpha note ${i}` : `note ${i}`, body: i === 4 ? "alpha alpha in the body" : null, views: i % 7 })))
      .execute();
    if (vectorsHere) {
      const rows: [string, number[] | null][] = [["x", [1, 0, 0]], ["y", [0, 1, 0]], ["xy", [0.7, 0.7, 0]], ["none", null]];
      await (app.db as any).insertInto("doc").values(rows.map(([title, embedding]) => ({ title, embedding: embedding && JSON.stringify(embedding) }))).execute();
    }
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it("pages forward by cursor: nextCursor until the last page, count the whole selection, rows in the full order", async () => {
    const expected = (await app.db.selectFrom("note").select("id").orderBy("views", "desc").orderBy("id").execute()).map((row) => row.id);
    const seen: number[] = [];
    let after: string | undefined;
    const cursors: (string | null)[] = [];
    do {
      const { status, body } = await list({ orderBy: [{ views: "desc" }], take: 10, page: true, ...(after ? { after } : {}) });
      expect(status).toBe(200);
      expect(body.count).toBe(25);
      seen.push(...body.data.map((row: { id: number }) => row.id));
      cursors.push(body.nextCursor);
      after = body.nextCursor ?? undefined;
    } while (after);
    expect(seen).toEqual(expected);
    expect(cursors.map((c) => typeof c)).toEqual(["string", "string", "object"]);
    expect(cursors[2]).toBeNull();
    // The same cursor twice reads the same page (Previous keeps a stack of them).
    const again = await list({ orderBy: [{ views: "desc" }], take: 10, after: cursors[0] });
    expect(again.body.data.map((row: { id: number }) => row.id)).toEqual(expected.slice(10, 20));
    expect(again.body.nextCursor).toBe(cursors[1]);
  });

  it("keeps skip (no nextCursor key) and filters a cursor page with where", async () => {
    const skipped = await list({ take: 10, skip: 20 });
    expect(skipped.status).toBe(200);
    expect(Object.keys(skipped.body).sort()).toEqual(["count", "data"]);
    expect(skipped.body.count).toBe(25);
    expect(skipped.body.data.map((row: { id: number }) => row.id)).toEqual([21, 22, 23, 24, 25]);

    const first = await list({ where: { views: { gte: 5 } }, take: 3, page: true });
    expect([first.body.count, first.body.data.map((row: { id: number }) => row.id)]).toEqual([6, [6, 7, 13]]);
    const next = await list({ where: { views: { gte: 5 } }, take: 3, after: first.body.nextCursor });
    expect([next.body.count, next.body.data.map((row: { id: number }) => row.id), next.body.nextCursor]).toEqual([6, [14, 20, 21], null]);
  });

  it("refuses a forged cursor, one for another orderBy or table, and one whose values do not fit, with 400", async () => {
    const made = (await list({ orderBy: [{ views: "asc" }], take: 2, page: true })).body.nextCursor as string;
    const cases: [unknown, string][] = [
      ["not a cursor!", "after: not a cursor (pass the nextCursor of a previous page)"],
      [cursor({ hello: 1 }), "after: not a cursor (pass the nextCursor of a previous page)"],
      [made, "after: this cursor was made for another orderBy: page with the orderBy that made it"],
      [cursor([1, "user", "id:asc", ["x"]]), 'after: this cursor was made for another table, not "note"'],
      [cursor([1, "note", "id:asc", ["1; drop table note"]]), expect.stringMatching(/^after: not a cursor \(id: /)],
    ];
    for (const [after, message] of cases) {
      const { status, body } = await list({ take: 2, after });
      expect([status, body.code, body.message]).toEqual([400, "BAD_REQUEST", message]);
    }
    expect(await app.db.selectFrom("note").select((eb) => eb.fn.countAll().as("n")).executeTakeFirstOrThrow()).toEqual({ n: family === "sqlite" ? 25 : "25" });
  });

  it("searches the full-text index: matches only, best first without a sort, counted; a sort pages by cursor", async () => {
    const ranked = await list({ search: "alpha" });
    expect(ranked.status).toBe(200);
    expect(ranked.body.count).toBe(10);
    // Note 4 holds the word three times in its title (A) and twice in its body (B): the best match.
    expect(ranked.body.data[0]).toMatchObject({ id: 5, title: "alpha alpha alpha 4" });
    expect(ranked.body.data.map((row: { id: number }) => row.id).sort((a: number, b: number) => a - b)).toEqual([1, 4, 5, 7, 10, 13, 16, 19, 22, 25]);
    // Rank order pages by skip.
    const second = await list({ search: "alpha", take: 6, skip: 6 });
    expect([second.body.count, second.body.data.length]).toEqual([10, 4]);

    const refused = await list({ search: "alpha", page: true });
    expect([refused.status, refused.body.message]).toEqual([
      400,
      "orderBy: a search ordered by rank has no cursor pages: give an orderBy to page it by cursor, or use list with skip",
    ]);
    const sorted = await list({ search: "alpha", orderBy: [{ id: "desc" }], take: 4, page: true });
    expect([sorted.body.count, sorted.body.data.map((row: { id: number }) => row.id)]).toEqual([10, [25, 22, 19, 16]]);
    const rest = await list({ search: "alpha", orderBy: [{ id: "desc" }], take: 8, after: sorted.body.nextCursor });
    expect([rest.body.count, rest.body.data.map((row: { id: number }) => row.id), rest.body.nextCursor]).toEqual([10, [13, 10, 7, 5, 4, 1], null]);
    // Words only: operators and quotes separate words, never a query language; every word must match
    // (note 4's title is "alpha alpha alpha 4", without "note").
    expect((await list({ search: '"alpha" | !note:*' })).body.count).toBe(9);
  });

  it("refuses a search on a table without a full-text index, and over 500 characters", async () => {
    const none = await call("data.list", { table: "user", search: "admin" });
    expect([none.status, none.body.message]).toEqual([400, 'search: table "user" has no full-text index (declare one with .search("user", [...]) in the schema)']);
    const long = await list({ search: "a".repeat(501) });
    expect(long.status).toBe(400);
    expect(long.body.message).toContain("search must be at most 500 characters");
    const paged = await call("data.list", { table: "user", search: "admin", page: true });
    expect(paged.status).toBe(400);
  });

  it("reads a credential table by cursor, redacted, and refuses its secrets in orderings", async () => {
    const first = await call("data.list", { table: "session", take: 1, page: true });
    expect(first.status).toBe(200);
    expect(first.body.data[0].token).toBe("[redacted]");
    expect(first.body.nextCursor).toBeNull();
    const sorted = await call("data.list", { table: "session", orderBy: [{ token: "asc" }], page: true });
    expect([sorted.status, sorted.body.message]).toEqual([400, 'orderBy[0].token: "token" is a secret column of "session" and cannot be sorted on']);
    // A cursor naming a secret column's position is refused as another ordering.
    const forged = await call("data.list", { table: "session", after: cursor([1, "session", "token:asc,id:asc", ["a", "b"]]) });
    expect([forged.status, forged.body.message]).toEqual([400, "after: this cursor was made for another orderBy: page with the orderBy that made it"]);
    const nearest = await call("data.list", { table: "session", nearest: { column: "token", vector: [1, 0, 0], k: 1 } });
    expect([nearest.status, nearest.body.message]).toEqual([400, 'nearest.column: "token" is a secret column of "session" and cannot be searched']);
  });

  it("meta says which tables are searchable and which columns are vectors", async () => {
    const { body } = await call("meta");
    const table = (name: string) => body.tables.find((t: { name: string }) => t.name === name);
    expect(table("note").search).toEqual({ columns: ["title", "body"], language: "simple" });
    expect(table("user").search).toBeNull();
    expect(table("note").columns.some((c: { vector?: unknown }) => c.vector !== undefined)).toBe(false);
    if (vectorsHere) expect(table("doc").columns.find((c: { name: string }) => c.name === "embedding").vector).toEqual({ dimensions: 3, distance: "cosine" });
  });

  it("exports a search: only its rows, in key order without a sort; 400 on a table without an index", async () => {
    const json = await request(app, "GET", "/_admin/export/note.json?search=alpha", { headers: { cookie: admin.cookie } });
    expect(json.status).toBe(200);
    expect(json.body.map((row: { id: number }) => row.id)).toEqual([1, 4, 5, 7, 10, 13, 16, 19, 22, 25]);
    const sorted = await request(app, "GET", `/_admin/export/note.json?search=alpha&orderBy=${encodeURIComponent('[{"id":"desc"}]')}`, { headers: { cookie: admin.cookie } });
    expect(sorted.body.map((row: { id: number }) => row.id)).toEqual([25, 22, 19, 16, 13, 10, 7, 5, 4, 1]);
    const none = await request(app, "GET", "/_admin/export/user.csv?search=x", { headers: { cookie: admin.cookie } });
    expect([none.status, none.body.message]).toEqual([400, 'search: table "user" has no full-text index (declare one with .search("user", [...]) in the schema)']);
  });

  // Vector columns need pgvector, which the embedded database loads; SQLite and a PostgreSQL server
  // without it are refused with their own codes (test/resources/vector-errors.test.ts).
  describe.skipIf(family !== "pglite")("nearest", () => {
    const near = (nearest: unknown, rest: Record<string, unknown> = {}) => call("data.list", { table: "doc", nearest, ...rest });

    it("answers the k nearest rows, nearest first, with _distance, rows without a vector left out", async () => {
      const { status, body } = await near({ column: "embedding", vector: [1, 0, 0], k: 10 });
      expect(status).toBe(200);
      expect(body.count).toBe(3);
      expect(body.data.map((row: { title: string }) => row.title)).toEqual(["x", "xy", "y"]);
      expect(body.data[0]).toEqual({ id: 1, title: "x", embedding: [1, 0, 0], _distance: 0 });
      expect(body.data[1]._distance).toBeCloseTo(1 - 0.7 / Math.hypot(0.7, 0.7), 5);
      expect(body).not.toHaveProperty("nextCursor");
      const filtered = await near({ column: "embedding", vector: [1, 0, 0], k: 1 }, { where: { title: { not: "x" } } });
      expect(filtered.body.data.map((row: { title: string }) => row.title)).toEqual(["xy"]);
    });

    it("leaves a row out of its own similar rows by its key, beside the filters, and still answers k others", async () => {
      // As the dashboard's "Similar rows" asks: the row's vector, the filter chips ANDed with the row's key excluded.
      const { status, body } = await near({ column: "embedding", vector: [1, 0, 0], k: 2 }, { where: { AND: [{ title: { not: "none" } }, { id: { not: 1 } }] } });
      expect(status).toBe(200);
      expect(body.count).toBe(2);
      expect(body.data.map((row: { id: number; title: string }) => [row.id, row.title])).toEqual([[3, "xy"], [2, "y"]]);
      expect(body.data[0]._distance).toBeGreaterThan(0);
    });

    it("refuses a non-vector column, a wrong dimension, k over the list limit, and pages", async () => {
      const cases: [unknown, Record<string, unknown>, string][] = [
        [{ column: "title", vector: [1, 0, 0], k: 1 }, {}, "nearest.column: expected a vector column (use embedding)"],
        [{ column: "embedding", vector: [1, 0], k: 1 }, {}, "nearest.vector: expected an array of 3 finite numbers for a vector column, got an array"],
        [{ column: "embedding", vector: [1, 0, 0], k: 21 }, {}, "nearest.k must be at most 20"],
        [{ column: "embedding", vector: [1, 0, 0], k: 1 }, { page: true }, "page: a nearest search answers its k rows at once and has no pages"],
        [{ column: "embedding", vector: [1, 0, 0], k: 1 }, { orderBy: [{ id: "asc" }] }, "orderBy: not with nearest, which orders by distance and answers k rows (leave it out)"],
        [{ column: "embedding", vector: [1, 0, 0], k: 1 }, { after: "x" }, "after: not with nearest, which orders by distance and answers k rows (leave it out)"],
      ];
      for (const [nearest, rest, message] of cases) {
        const { status, body } = await near(nearest, rest);
        expect([status, body.message]).toEqual([400, message]);
      }
      const noVector = await call("data.list", { table: "note", nearest: { column: "title", vector: [1], k: 1 } });
      expect([noVector.status, noVector.body.message]).toEqual([400, 'nearest.column: expected a vector column (table "note" has no vector column)']);
    });
  });
});

describe("a full-text index over a secret column", () => {
  const withSecretIndex = schema("1").auth().search("session", ["token"]).build();
  let app: Awaited<ReturnType<App<any>["start"]>>;
  let admin: SignedIn;

  beforeAll(async () => {
    app = await new App({ name: "Secret index", baseUrl: ORIGIN, db: sqliteMemory() }).schema(withSecretIndex).auth({ secret: SECRET, emailAndPassword: { enabled: true } }).admin().start();
    admin = await signUp(app, "admin@example.test");
    await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", admin.userId).execute();
  });
  afterAll(async () => {
    await app?.close();
  });

  it("is never searched from the admin API, nor offered to the dashboard", async () => {
    const token = (await app.db.selectFrom("session").select("token").executeTakeFirstOrThrow()).token;
    const { status, body } = await rpc(app, "_admin.data.list", { table: "session", search: token }, { cookie: admin.cookie });
    expect([status, body.message]).toEqual([400, 'search: the full-text index of "session" holds the secret column "token", so it cannot be searched here']);
    const exported = await request(app, "GET", `/_admin/export/session.json?search=${token}`, { headers: { cookie: admin.cookie } });
    expect(exported.status).toBe(400);
    const meta = await rpc(app, "_admin.meta", undefined, { cookie: admin.cookie });
    expect(meta.body.tables.find((t: { name: string }) => t.name === "session").search).toBeNull();
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { families, openDatabase, type TestDatabase } from "../support/databases.js";
import { request, rpc } from "../support/app.js";
import { signUp, type SignedIn } from "../support/auth.js";
import { csvRecord } from "../../plugins/admin/csv.js";
import { runnerApp } from "./runner-fixture.js";
import { ORIGIN } from "../support/auth.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import type { DatabaseConfig } from "../../kernel/index.js";
import { SECRET } from "./fixture.js";

describe("csvRecord", () => {
  it("quotes as RFC 4180 says and keeps formulas out of spreadsheets", () => {
    expect(csvRecord(["plain", 'say "hi"', "a,b", "two\nlines", "cr\rhere"])).toBe('plain,"say ""hi""","a,b","two\nlines","cr\rhere"\r\n');
    expect(csvRecord(["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx", "café ☕"])).toBe(`'=1+1,'+1,'-1,'@SUM(A1),'\tx,"'\rx",café ☕\r\n`);
    expect(csvRecord([-5, 0, true, null, undefined, { a: "=x" }, ["b"]])).toBe('-5,0,true,,,"{""a"":""=x""}","[""b""]"\r\n');
    // A field marked as not free text (a decimal, bigint or bytes column) is written as it is.
    expect(csvRecord(["-12.50", "-9007199254740993", "+/8=", "-1", "=x"], [false, false, false, true])).toBe("-12.50,-9007199254740993,+/8=,'-1,'=x\r\n");
  });
});

describe.each(families())("bulk delete, export and the procedure list on %s", (family) => {
  let db: TestDatabase;
  let app: Awaited<ReturnType<ReturnType<typeof runnerApp>["start"]>>;
  let admin: SignedIn;
  let alice: SignedIn;
  const as = (who: SignedIn | null): HeadersInit => (who ? { cookie: who.cookie } : {});
  const call = (name: string, input?: unknown, who: SignedIn | null = admin) => rpc(app, `_admin.${name}`, input, as(who));
  const download = (path: string, who: SignedIn | null = admin) => request(app, "GET", `/_admin/export/${path}`, { headers: as(who) });
  const ids = async () => (await app.db.selectFrom("post").select("id").orderBy("id").execute()).map((row) => row.id);

  beforeAll(async () => {
    db = await openDatabase(family);
    app = await runnerApp({ dialect: db.dialect, kind: db.kind }, { exportLimit: 1500 }).start();
    admin = await signUp(app, "admin@example.test");
    alice = await signUp(app, "alice@example.test");
    await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", admin.userId).execute();
    const titles = ["=HYPERLINK(\"http://evil.test\")", "+1", "-2", "@SUM(A1)", 'with "quotes", commas', "two\nlines", "café ☕"];
    await app.db
      .insertInto("post")
      .values(Array.from({ length: 20 }, (_, i) => ({ title: titles[i] ?? `post ${String(i).padStart(2, "0")}`, views: i, authorId: i < 3 ? alice.userId : null })))
      .execute();
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it("answers 401 signed out and 403 without an admin role, before validating input", async () => {
    for (const [name, input] of [["data.deleteMany", { table: "post", keys: [1] }], ["data.deleteMany", { table: "nope" }], ["procedures", undefined]] as const) {
      expect((await call(name, input, null)).status).toBe(401);
      const refused = await call(name, input, alice);
      expect([refused.status, refused.body.message]).toEqual([403, "Requires one of the roles: admin"]);
    }
    for (const path of ["post.csv", "post.json", "nope.xml?where=%7B"]) {
      expect((await download(path, null)).status).toBe(401);
      const refused = await download(path, alice);
      expect([refused.status, refused.body.message]).toEqual([403, "Requires one of the roles: admin"]);
    }
  });

  it("data.deleteMany deletes the rows named by key, in one transaction", async () => {
    const [first, second] = await ids();
    const { status, body } = await call("data.deleteMany", { table: "post", keys: [first, second, first] });
    expect(status).toBe(200);
    expect(body.count).toBe(2);
    expect(body.data.map((row: any) => row.id).sort()).toEqual([first, second]);
    expect(await ids()).not.toContain(first);
    expect((await call("data.get", { table: "post", where: { id: second } })).status).toBe(404);
    expect((await call("data.list", { table: "post" })).body.count).toBe(18);
  });

  it("data.deleteMany deletes nothing when a key matches no row or a row is still referenced", async () => {
    const [third, fourth] = await ids();
    const missing = await call("data.deleteMany", { table: "post", keys: [third, 999_999] });
    expect([missing.status, missing.body.message]).toEqual([404, "No post row with id 999999; nothing was deleted"]);
    expect(await ids()).toContain(third);

    // alice still has a post: deleting her with a user nobody references is a conflict, and neither goes.
    const loner = await signUp(app, "loner@example.test");
    const conflict = await call("data.deleteMany", { table: "user", keys: [loner.userId, alice.userId] });
    expect(conflict.status).toBe(409);
    const left = await app.db.selectFrom("user").select("id").where("id", "in", [loner.userId, alice.userId]).execute();
    expect(left).toHaveLength(2);
    expect(fourth).toBeDefined();
  });

  it("data.deleteMany refuses credential tables, bad keys and more keys than a page", async () => {
    const cases: [unknown, number, string][] = [
      [{ table: "session", keys: ["x"] }, 403, '"session" holds credentials and is read-only'],
      [{ table: "nope", keys: [1] }, 400, 'unknown table "nope"'],
      [{ table: "post", keys: [] }, 400, "keys"],
      [{ table: "post", keys: ["abc"] }, 400, "keys[0]"],
      [{ table: "post", keys: [{ gt: 0 }] }, 400, "keys"],
      [{ table: "post", keys: Array.from({ length: 201 }, (_, i) => i + 1) }, 400, "keys"],
    ];
    for (const [input, status, message] of cases) {
      const { status: got, body } = await call("data.deleteMany", input);
      expect([got, JSON.stringify(input).slice(0, 60)]).toEqual([status, JSON.stringify(input).slice(0, 60)]);
      expect(body.message).toContain(message);
    }
    expect(await ids()).toHaveLength(18);
  });

  it("exports the filtered rows as CSV: header, RFC 4180 quoting, formulas escaped, UTF-8", async () => {
    const where = encodeURIComponent(JSON.stringify({ views: { gte: 2, lt: 7 } }));
    const orderBy = encodeURIComponent(JSON.stringify([{ views: "desc" }]));
    const { status, body, headers } = await download(`post.csv?where=${where}&orderBy=${orderBy}`);
    expect(status).toBe(200);
    expect(headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(headers.get("content-disposition")).toBe('attachment; filename="post.csv"');
    expect(headers.get("x-content-type-options")).toBe("nosniff");
    expect(headers.get("cache-control")).toBe("no-store");
    const rows = await app.db.selectFrom("post").selectAll().where("views", ">=", 2).where("views", "<", 7).orderBy("views", "desc").execute();
    const lines = (body as string).split("\r\n");
    expect(lines[0]).toBe("id,title,body,views,authorId,published");
    expect(lines.at(-1)).toBe("");
    expect(body).toContain(`${rows.find((r) => r.views === 6)!.id},café ☕,,6,,false\r\n`);
    expect(body).toContain(`,"two\nlines",,5,,false\r\n`);
    expect(body).toContain(`,"with ""quotes"", commas",,4,,false\r\n`);
    expect(body).toContain(`,'@SUM(A1),,3,,false\r\n`);
    expect(body).toContain(`,'-2,,2,${alice.userId},false\r\n`);
    expect((body as string).indexOf("café")).toBeLessThan((body as string).indexOf("'-2"));
  });

  it("exports JSON, the whole selection rather than a page, in primary-key order by default", async () => {
    const { status, body, headers } = await download("post.json");
    expect(status).toBe(200);
    expect(headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(body.map((row: any) => row.id)).toEqual(await ids());
    expect(body[0]).toEqual({ id: expect.any(Number), title: "-2", body: null, views: 2, authorId: alice.userId, published: false });
  });

  it("streams more rows than one read takes (500), each once, in order", async () => {
    await app.db.deleteFrom("post").execute();
    await app.db.insertInto("post").values(Array.from({ length: 1200 }, (_, i) => ({ title: `bulk ${i}`, views: i % 7 }))).execute();
    const { body } = await download("post.json?orderBy=" + encodeURIComponent(JSON.stringify([{ views: "desc" }])));
    expect(body).toHaveLength(1200);
    expect(new Set(body.map((row: any) => row.id)).size).toBe(1200);
    expect(body.map((row: any) => row.views)).toEqual(Array.from({ length: 1200 }, (_, i) => i % 7).sort((a, b) => b - a));
    const csv = await download("post.csv");
    expect((csv.body as string).split("\r\n")).toHaveLength(1202);
  });

  it("redacts secrets as the data API does, and refuses to filter or sort on them", async () => {
    const { status, body } = await download("session.json");
    expect(status).toBe(200);
    expect(body.length).toBeGreaterThanOrEqual(2);
    for (const row of body) expect(row.token).toBe("[redacted]");
    const csv = await download("session.csv");
    for (const { token } of await app.db.selectFrom("session").select("token").execute()) expect(csv.body).not.toContain(token);
    const filtered = await download(`session.csv?where=${encodeURIComponent(JSON.stringify({ token: { startsWith: "a" } }))}`);
    expect([filtered.status, filtered.body.message]).toEqual([400, 'where.token: "token" is a secret column of "session" and cannot be filtered on']);
    const sorted = await download(`session.csv?orderBy=${encodeURIComponent(JSON.stringify([{ token: "asc" }]))}`);
    expect(sorted.status).toBe(400);
  });

  it("refuses a bad name, bad JSON, unknown columns and a selection over exportLimit with 400", async () => {
    const cases: [string, string][] = [
      ["post.xml", 'Name the export <table>.csv or <table>.json (got "post.xml")'],
      ["post", 'Name the export <table>.csv or <table>.json (got "post")'],
      ["nope.csv", 'unknown table "nope"'],
      ["post.csv?where=%7Bnope", "where: not valid JSON"],
      [`post.csv?where=${encodeURIComponent('{"nope":1}')}`, 'unknown column "nope" on table "post"'],
      [`post.csv?orderBy=${encodeURIComponent('[{"nope":"asc"}]')}`, 'unknown column "nope" on table "post"'],
      [`post.csv?orderBy=${encodeURIComponent('{"id":"asc"}')}`, "Invalid input: orderBy"],
    ];
    for (const [path, message] of cases) {
      const { status, body } = await download(path);
      expect([path, status]).toEqual([path, 400]);
      expect(body.message).toContain(message);
    }
    await app.db.insertInto("post").values(Array.from({ length: 301 }, () => ({ title: "one too many", views: 100 }))).execute();
    const over = await download("post.csv");
    expect([over.status, over.body.message]).toEqual([400, "The filter selects 1501 rows; an export holds at most 1500 (exportLimit): narrow the filter"]);
    expect((await download(`post.csv?where=${encodeURIComponent('{"views":{"lt":100}}')}`)).status).toBe(200);
  });

  it("procedures: every procedure of the app with its input's JSON Schema, but _admin.* and streams", async () => {
    const { status, body } = await call("procedures");
    expect(status).toBe(200);
    const names = body.map((p: any) => p.name);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(["clock.now", "math.add", "post.create", "post.list", "whoami"]));
    expect(names.filter((name: string) => name.startsWith("_admin.") || name === "ticks")).toEqual([]);
    const byName = Object.fromEntries(body.map((p: any) => [p.name, p.input]));
    expect(byName["clock.now"]).toBeNull();
    expect(byName["math.add"]).toEqual({
      type: "object",
      properties: {
        a: { type: "number" },
        b: { type: "number" },
        mode: { type: "string", enum: ["sum", "concat"], default: "sum" },
        note: { type: "string", minLength: 3 },
        tags: { type: "array", items: { type: "string" } },
        loud: { type: "boolean" },
      },
      required: ["a", "b"],
    });
    expect(byName["post.create"]).toMatchObject({ type: "object", properties: { title: { type: "string" } } });
  });
});

/** Tables without a primary key (one with a column nothing can be ordered by), and one of bytes. */
const keyless = schema("1")
  .auth()
  .table("reading", (t) => ({ sensor: t.text(), seq: t.integer(), amount: t.decimal(), total: t.bigint(), note: t.text().nullable() }))
  .table("event", (t) => ({ name: t.text(), data: t.jsonb() }))
  .table("blob", (t) => ({ id: t.serial().primaryKey(), data: t.bytes() }))
  .build();

function keylessApp(db: DatabaseConfig) {
  return new App({ name: "Admin Export Test", baseUrl: ORIGIN, db }).schema(keyless).auth({ secret: SECRET, emailAndPassword: { enabled: true } }).admin();
}

describe.each(families())("export of tables without a primary key, and of typed columns, on %s", (family) => {
  let db: TestDatabase;
  let app: Awaited<ReturnType<ReturnType<typeof keylessApp>["start"]>>;
  let admin: SignedIn;
  const download = (path: string) => request(app, "GET", `/_admin/export/${path}`, { headers: { cookie: admin.cookie } });

  beforeAll(async () => {
    db = await openDatabase(family);
    app = await keylessApp({ dialect: db.dialect, kind: db.kind }).start();
    admin = await signUp(app, "admin@example.test");
    await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", admin.userId).execute();
    await app.db
      .insertInto("reading")
      .values(Array.from({ length: 600 }, (_, i) => ({ sensor: `s${i % 3}`, seq: i, amount: i === 0 ? "-12.50" : `${i}.25`, total: i === 0 ? "-9007199254740993" : String(i), note: i === 0 ? "=cmd" : null })))
      .execute();
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it("streams every row of a key-less table past one read (500), each once, ordered by its columns", async () => {
    const { status, body } = await download("reading.json");
    expect(status).toBe(200);
    expect(body).toHaveLength(600);
    const seen = body.map((row: any) => `${row.sensor}:${row.seq}`);
    expect(new Set(seen).size).toBe(600);
    expect(seen).toEqual(Array.from({ length: 600 }, (_, i) => i).sort((a, b) => (a % 3) - (b % 3) || a - b).map((i) => `s${i % 3}:${i}`));

    const ordered = await download(`reading.json?orderBy=${encodeURIComponent(JSON.stringify([{ seq: "desc" }]))}`);
    expect(ordered.body.map((row: any) => row.seq)).toEqual(Array.from({ length: 600 }, (_, i) => 599 - i));

    const csv = await download(`reading.csv?where=${encodeURIComponent(JSON.stringify({ seq: { gte: 1 } }))}`);
    expect((csv.body as string).split("\r\n")).toHaveLength(601);
  });

  it("refuses up front a key-less table with an unorderable column when the selection is over one read", async () => {
    await app.db.insertInto("event").values(Array.from({ length: 501 }, (_, i) => ({ name: `e${i}`, data: JSON.stringify({ i }) }))).execute();
    const over = await download("event.json");
    expect([over.status, over.body.message]).toEqual([
      400,
      '"event" has no primary key and its jsonb column "data" cannot be ordered by, so it exports at most 500 rows at once (the filter selects 501): narrow the filter',
    ]);
    const narrowed = await download(`event.json?where=${encodeURIComponent(JSON.stringify({ name: { not: "e0" } }))}`);
    expect([narrowed.status, narrowed.body.length]).toEqual([200, 500]);
  });

  it("keeps the formula guard to text columns: a negative decimal or bigint and base64 bytes are written as they are", async () => {
    await app.db.insertInto("blob").values({ data: new Uint8Array([0xfb, 0xff]) }).execute();
    const csv = await download(`reading.csv?where=${encodeURIComponent(JSON.stringify({ seq: 0 }))}`);
    expect(csv.body).toBe("sensor,seq,amount,total,note\r\ns0,0,-12.50,-9007199254740993,'=cmd\r\n");
    const blob = await download("blob.csv");
    expect(blob.body).toMatch(/^id,data\r\n\d+,\+\/8=\r\n$/);
  });
});

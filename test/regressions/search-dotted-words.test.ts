// Full-text search on PostgreSQL and PGlite found nothing for text that sits in a row word for word
// when it holds a dot or an @: `1.5`, `v2.0.1`, `example.com`, `ada@example.com`. PostgreSQL's parser
// indexes each of those as one token, but the search was cut into the words `1` and `5` first,
// which that token does not hold (SQLite indexes the parts and found the row). The search now also
// matches the text as PostgreSQL's parser reads it, so it finds what the row holds on every family.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { request, rpc } from "../support/app.js";
import { families, openDatabase, type Family, type TestDatabase } from "../support/databases.js";

const v1 = schema("1")
  .table("note", (t) => ({ id: t.serial().primaryKey(), title: t.text(), body: t.text().nullable() }))
  .search("note", { title: "A", body: "B" })
  .build();

describe.each<Family>(families())("search for dotted words on %s", (family) => {
  let db: TestDatabase;
  let app: any;
  const id: Record<string, number> = {};
  beforeAll(async () => {
    db = await openDatabase(family);
    app = await new App({ baseUrl: "http://search.test", db: { dialect: db.dialect, kind: db.kind } }).schema(v1).resource("note").openapi().start();
    const rows = {
      release: { title: "Release 1.5 notes", body: null },
      version: { title: "Upgrade", body: "needs v2.0.1 or later" },
      host: { title: "See example.com today", body: null },
      mail: { title: "Write to ada@example.com", body: null },
      spaced: { title: "foo bar", body: null },
    };
    for (const [name, row] of Object.entries(rows)) id[name] = (await rpc(app, "note.create", row)).body.id;
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  const found = async (search: string) => {
    const result = await rpc(app, "note.list", { search });
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    return result.body.map((row: { id: number }) => row.id).sort();
  };

  it("finds a row by the text it holds", async () => {
    expect(await found("1.5")).toEqual([id.release]);
    expect(await found("release 1.5")).toEqual([id.release]);
    expect(await found("v2.0.1")).toEqual([id.version]);
    expect(await found("ada@example.com")).toEqual([id.mail]);
    // PostgreSQL's parser keeps an e-mail address whole: its host part alone finds it on SQLite only.
    expect(await found("example.com")).toEqual(db.kind === "postgres" ? [id.host] : [id.host, id.mail].sort());
    const rest = await request(app, "GET", `/rest/note?search=${encodeURIComponent("1.5")}`);
    expect(rest.body.map((row: { id: number }) => row.id)).toEqual([id.release]);
  });

  it("still reads words only, each one required", async () => {
    expect(await found("foo-bar")).toEqual([id.spaced]);
    expect(await found("1.5 missing")).toEqual([]);
    expect(await found(`"1.5" | !release & :*`)).toEqual([id.release]);
    expect(await found("1.5\u0000")).toEqual([id.release]);
  });
});

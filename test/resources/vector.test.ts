import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App, type InferRouter } from "../../presets/trellis.js";
import { createClient } from "../../presets/client.js";
import { openDatabase, type TestDatabase } from "../support/databases.js";
import { request, rpc } from "../support/app.js";
import { ORIGIN } from "../support/auth.js";

// Vector search runs on the embedded database (pgvector loaded); SQLite and a PostgreSQL server
// without pgvector are refused with their own codes (vector-errors.test.ts).

const v1 = schema("1")
  .auth()
  .table("doc", (t) => ({
    id: t.serial().primaryKey(),
    title: t.text(),
    topic: t.text().default("misc"),
    ownerId: t.text().nullable(),
    embedding: t.vector(3).index().nullable(),
    far: t.vector(2, { distance: "l2" }).nullable(),
  }))
  .build();

describe("vector search on the embedded database", () => {
  let db: TestDatabase;
  const build = (database: TestDatabase) =>
    new App({ name: "vectors", baseUrl: ORIGIN, db: { dialect: database.dialect, kind: database.kind } })
      .schema(v1)
      .auth({ secret: "a-test-secret-that-is-long-enough-0123456789", emailAndPassword: { enabled: true } })
      .resource("doc", { listLimit: { default: 3, max: 4 }, mcp: ["list"] })
      .openapi()
      .mcp();
  let started: Awaited<ReturnType<ReturnType<typeof build>["start"]>>;

  beforeAll(async () => {
    db = await openDatabase("pglite");
    started = await build(db).start();
    const rows: [string, string, number[] | null][] = [
      ["x axis", "a", [1, 0, 0]],
      ["y axis", "a", [0, 1, 0]],
      ["z axis", "b", [0, 0, 1]],
      ["xy", "b", [0.7, 0.7, 0]],
      ["no vector", "a", null],
    ];
    for (const [title, topic, embedding] of rows) {
      const created = await rpc(started, "doc.create", { title, topic, embedding, far: embedding && embedding.slice(0, 2) });
      expect(created.status).toBe(200);
    }
  });
  afterAll(async () => {
    await started?.close();
    await db?.close();
  });

  it("reads a vector back as number[] on RPC and REST", async () => {
    const got = await rpc(started, "doc.get", { where: { id: 4 } });
    expect(got.body.embedding).toEqual([0.7, 0.7, 0]);
    const rest = await request(started, "GET", "/rest/doc/4");
    expect(rest.body.embedding).toEqual([0.7, 0.7, 0]);
    expect((await rpc(started, "doc.get", { where: { id: 5 } })).body.embedding).toBeNull();
  });

  it("refuses a vector of the wrong length or with non-finite numbers with a 400 naming the field", async () => {
    const short = await rpc(started, "doc.create", { title: "short", embedding: [1, 2] });
    expect(short.status).toBe(400);
    expect(JSON.stringify(short.body)).toMatch(/exactly 3 numbers/);
    const text = await rpc(started, "doc.create", { title: "text", embedding: ["1", 2, 3] });
    expect(text.status).toBe(400);
    // JSON has no Infinity, but 1e999 parses to it.
    const huge = await request(started, "POST", "/rest/doc", { headers: { "content-type": "application/json" }, body: '{"title":"inf","embedding":[1e999,0,0]}' });
    expect(huge.status).toBe(400);
    expect(JSON.stringify(huge.body)).toMatch(/embedding.*Infinity/);
  });

  it("lists the k nearest rows, nearest first, each with its distance", async () => {
    const near = await rpc(started, "doc.list", { nearest: { column: "embedding", vector: [1, 0.1, 0], k: 3 } });
    expect(near.status).toBe(200);
    expect(near.body.map((row: any) => row.title)).toEqual(["x axis", "xy", "y axis"]);
    expect(near.body[0]._distance).toBeCloseTo(1 - 1 / Math.sqrt(1.01), 5);
    const distances = near.body.map((row: any) => row._distance);
    expect([...distances].sort((a, b) => a - b)).toEqual(distances);
    // Rows without a vector have no distance and are left out.
    const all = await rpc(started, "doc.list", { nearest: { column: "embedding", vector: [1, 1, 1], k: 4 } });
    expect(all.body.map((row: any) => row.title)).not.toContain("no vector");
    // The column's own distance: l2 on `far`.
    const l2 = await rpc(started, "doc.list", { nearest: { column: "far", vector: [0, 0], k: 1 } });
    expect(l2.body[0].title).toBe("z axis");
    expect(l2.body[0]._distance).toBe(0);
  });

  it("combines nearest with where in one statement", async () => {
    const near = await rpc(started, "doc.list", { where: { topic: "b" }, nearest: { column: "embedding", vector: [1, 0, 0], k: 3 } });
    expect(near.body.map((row: any) => row.title)).toEqual(["xy", "z axis"]);
    const compiled = started.db.query.doc.compile({ where: { topic: "b" }, nearest: { column: "embedding", vector: [1, 0, 0], k: 3 } });
    expect(compiled.sql).toMatch(/<=>/);
    expect(compiled.parameters).toContain("[1,0,0]");
  });

  it("answers 400 to a bad nearest: unknown column, wrong length, k over the list limit, with orderBy, take or on page", async () => {
    const bad = [
      { nearest: { column: "title", vector: [1, 0, 0], k: 1 }, message: /expected a vector column \(use embedding, far\)/ },
      { nearest: { column: "embedding", vector: [1, 0], k: 1 }, message: /nearest.vector: expected an array of 3 finite numbers/ },
      { nearest: { column: "embedding", vector: [1, 0, 0], k: 5 }, message: /nearest.k must be at most 4/ },
      { nearest: { column: "embedding", vector: [1, 0, 0], k: 0 }, message: /k/ },
      { nearest: { column: "embedding", vector: [1, 0, 0], k: 1, extra: 1 }, message: /extra|nrecognized/ },
      { nearest: { column: "embedding", vector: [1, 0, 0], k: 1 }, orderBy: [{ title: "asc" }], message: /orderBy: not with nearest/ },
      { nearest: { column: "embedding", vector: [1, 0, 0], k: 1 }, take: 2, message: /take: not with nearest/ },
    ];
    for (const { message, ...input } of bad) {
      const answer = await rpc(started, "doc.list", input);
      expect(answer.status, JSON.stringify(input)).toBe(400);
      expect(JSON.stringify(answer.body)).toMatch(message);
    }
    const page = await rpc(started, "doc.page", { nearest: { column: "embedding", vector: [1, 0, 0], k: 1 } });
    expect(page.status).toBe(400);
    expect(page.body.message).toMatch(/no pages/);
    const where = await rpc(started, "doc.list", { where: { embedding: [1, 0, 0] } });
    expect(where.status).toBe(400);
    expect(where.body.message).toMatch(/use nearest/);
  });

  it("takes nearest on REST: a JSON body on POST /rest/doc/list, or bracket notation on GET", async () => {
    const posted = await request(started, "POST", "/rest/doc/list", {
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ nearest: { column: "embedding", vector: [0, 0, 1], k: 1 } }),
    });
    expect(posted.status).toBe(200);
    expect(posted.body[0]).toMatchObject({ title: "z axis", embedding: [0, 0, 1], _distance: 0 });
    const query = "nearest[column]=embedding&nearest[vector][0]=0&nearest[vector][1]=1&nearest[vector][2]=0&nearest[k]=1";
    const got = await request(started, "GET", `/rest/doc?${query}`);
    expect(got.status).toBe(200);
    expect(got.body.map((row: any) => row.title)).toEqual(["y axis"]);
  });

  it("documents nearest, the POST list, page and batch in /openapi.json", async () => {
    const document = (await request(started, "GET", "/openapi.json")).body;
    const list = document.paths["/doc"].get;
    expect(list.parameters.find((p: any) => p.name === "nearest").schema.properties.column).toEqual({ enum: ["embedding", "far"] });
    expect(document.paths["/doc/list"].post.requestBody.content["application/json"].schema.properties.nearest).toBeDefined();
    expect(document.components.schemas.Doc.properties.embedding).toMatchObject({ type: ["array", "null"], items: { type: "number" }, minItems: 3, maxItems: 3 });
    expect(document.paths["/doc/page"].post.responses["200"].content["application/json"].schema.required).toEqual(["items", "nextCursor"]);
    expect(document.paths["/doc/batch"].post.responses["200"].content["application/json"].schema.required).toEqual(["create", "update", "delete"]);
  });

  it("serves nearest through the MCP list tool", async () => {
    const call = async (method: string, params: unknown) => {
      const response = await started.handle(
        new Request(`${ORIGIN}/mcp`, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
        }),
      );
      return (await response.json()) as any;
    };
    const listed = await call("tools/list", {});
    expect(listed.result.tools.find((tool: any) => tool.name === "doc_list").inputSchema.properties.nearest).toBeDefined();
    const result = await call("tools/call", { name: "doc_list", arguments: { nearest: { column: "embedding", vector: [0, 1, 0], k: 1 } } });
    expect(JSON.parse(result.result.content[0].text)[0]).toMatchObject({ title: "y axis", _distance: 0 });
  });

  it("db.query findMany takes nearest, and the typed client types _distance", async () => {
    const rows = await started.db.query.doc.findMany({ nearest: { column: "embedding", vector: [0, 1, 0], k: 2 } });
    expect(rows[0]!.title).toBe("y axis");
    expectTypeOf(rows[0]!._distance).toEqualTypeOf<number>();
    const plain = await started.db.query.doc.findMany({ take: 1 });
    expectTypeOf(plain[0]!).not.toHaveProperty("_distance");
    const client = createClient<InferRouter<ReturnType<typeof build>>>({
      url: ORIGIN,
      fetch: (input, init) => started.handle(new Request(input as RequestInfo, init as RequestInit)),
    });
    const near = await client.doc.list({ nearest: { column: "embedding", vector: [0, 0, 1], k: 1 } });
    expect(near[0]!.embedding).toEqual([0, 0, 1]);
    expectTypeOf(near[0]!._distance).toEqualTypeOf<number>();
    expectTypeOf(near[0]!.embedding).toEqualTypeOf<number[] | null>();
    // @ts-expect-error a text column is not a vector column
    client.doc.list({ nearest: { column: "title", vector: [1], k: 1 } }).catch(() => {});
  });
});

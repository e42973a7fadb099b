import { validate, compileErrors } from "@readme/openapi-parser";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createBlog } from "../../examples/blog/app.js";
import { localLive } from "../../kernel/db/dialect/entry.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { closeAfterEach, request, sqliteMemory } from "../support/app.js";

const build = closeAfterEach();
/** The blog streams posts: on SQLite it needs the in-process live provider. */
const blogDb = () => ({ ...sqliteMemory(), live: localLive() });

async function documentOf(app: { handle(request: Request): Promise<Response>; migrator?: { migrateToLatest(): Promise<unknown> } }) {
  // A built app serves once its schema is migrated (before that, 503 "starting").
  await app.migrator?.migrateToLatest();
  const response = await request(app, "GET", "/openapi.json");
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("application/json");
  return response.body;
}

async function expectValid(document: unknown) {
  const result = await validate(structuredClone(document) as never);
  if (!result.valid) throw new Error(compileErrors(result));
  expect(result.valid).toBe(true);
}

const everyColumn = schema("7")
  .auth({ apiKeys: true })
  .table("kitchen", (t) => ({
    id: t.serial().primaryKey(),
    label: t.text(),
    code: t.varchar().nullable(),
    qty: t.integer().default(0),
    big: t.bigint().nullable(),
    price: t.decimal().nullable(),
    ratio: t.real().nullable(),
    flag: t.boolean().nullable(),
    at: t.timestamp().nullable(),
    day: t.date().nullable(),
    meta: t.jsonb().nullable(),
    ref: t.uuid().nullable(),
    blob: t.bytes().nullable(),
    status: t.text().enum(["new", "done"]).default("new"),
    tags: t.text().enum(["a", "b", "c"], { multiple: true }).nullable(),
  }))
  .table("setting", (t) => ({ key: t.text().primaryKey(), value: t.text() }))
  .build();

describe("/openapi.json", () => {
  it("describes the blog example as a valid OpenAPI 3.1 document", async () => {
    const app = build(createBlog(blogDb(), { baseUrl: "https://blog.example.test", onError: () => {} }));
    const document = await documentOf(app);
    await expectValid(document);
    expect(document.openapi).toMatch(/^3\.1\./);
    expect(document.info).toEqual({ title: "Trellis Blog", version: "4" });
    expect(document.servers[0].url).toBe("https://blog.example.test/rest");
    expect(Object.keys(document.paths).sort()).toEqual([
      "/api/auth/get-session",
      "/api/auth/sign-in/email",
      "/api/auth/sign-out",
      "/api/auth/sign-up/email",
      "/comment",
      "/comment/batch",
      "/comment/list",
      "/comment/page",
      "/comment/{id}",
      "/file/upload",
      "/me",
      "/post",
      "/post/batch",
      "/post/list",
      "/post/page",
      "/post/publish",
      "/post/search",
      "/post/{id}",
    ]);
    expect(Object.keys(document.paths["/post"])).toEqual(["get", "post"]);
    expect(Object.keys(document.paths["/post/{id}"])).toEqual(["get", "patch", "delete"]);
    // The live stream and the admin namespace stay out; of file.*, only the multipart upload is in.
    expect(JSON.stringify(document.paths)).not.toContain("post.live");
    expect(document.components.securitySchemes.session).toMatchObject({ type: "apiKey", in: "cookie" });
  });

  it("takes inputs from the procedures' zod schemas, rows from the table, and one error body", async () => {
    const app = build(createBlog(blogDb(), { onError: () => {} }));
    const document = await documentOf(app);
    const search = document.paths["/post/search"].post;
    expect(search.operationId).toBe("post.search");
    expect(search.requestBody.content["application/json"].schema).toMatchObject({
      type: "object",
      properties: { query: { type: "string", minLength: 1 }, take: { type: "integer", maximum: 50 } },
      required: ["query"],
    });
    const create = document.paths["/post"].post;
    expect(create.requestBody.content["application/json"].schema.required).toEqual(["title"]);
    // authorId is the owner column: server-controlled, not in the create body.
    expect(create.requestBody.content["application/json"].schema.properties.authorId).toBeUndefined();
    expect(Object.keys(create.responses)).toEqual(["200", "400", "401", "409", "500"]);
    expect(create.security).toEqual([{ session: [] }]);
    // The blog's post list is a function rule (drafts show only to their author): like every rule
    // but "public", it lists the credential schemes, since what it allows is decided per call.
    const list = document.paths["/post"].get;
    expect(list.security).toEqual([{ session: [] }]);
    expect(list.parameters.map((p: { name: string }) => p.name)).toEqual(["where", "orderBy", "take", "skip", "after", "search", "include"]);
    expect(list.responses["200"].content["application/json"].schema).toEqual({ type: "array", items: { $ref: "#/components/schemas/Post" } });
    const get = document.paths["/post/{id}"].get;
    expect(get.parameters[0]).toMatchObject({ name: "id", in: "path", required: true, schema: { type: "integer" } });
    expect(Object.keys(document.paths["/post/{id}"].delete.responses)).toEqual(["200", "400", "401", "404", "409", "500"]);
    expect(document.components.schemas.Error).toMatchObject({ required: ["code", "status", "message"] });
    expect(document.components.schemas.Post.properties).toMatchObject({ id: { type: "integer" }, createdAt: { type: "string", format: "date-time" }, slug: { type: ["string", "null"] } });
  });

  it("is valid for an app with every column type, API keys and a text key", async () => {
    const app = build(
      new App({ name: "Every column", db: sqliteMemory() })
        .schema(everyColumn)
        .auth({ secret: "a-test-secret-that-is-long-enough-0123456789", emailAndPassword: { enabled: true } })
        .resource("kitchen", { permissions: { delete: "admin" } })
        .resource("setting", { permissions: { list: "authenticated", get: ({ context }) => context.user !== null } })
        .procedure("math.add", (base) => base.input(z.object({ a: z.number(), b: z.number() })).output(z.number()).handler(({ input }) => input.a + input.b))
        .procedure("ping", (base) => base.handler(() => "pong"))
        .openapi(),
    );
    const document = await documentOf(app);
    await expectValid(document);
    expect(document.info).toEqual({ title: "Every column", version: "7" });
    expect(document.servers[0].url).toBe("/rest");
    expect(document.components.securitySchemes.apiKey).toMatchObject({ type: "apiKey", in: "header", name: "x-api-key" });
    expect(document.components.schemas.Kitchen.properties).toMatchObject({
      big: { type: ["string", "null"] },
      price: { type: ["string", "null"] },
      day: { type: ["string", "null"], format: "date" },
      blob: { type: ["string", "null"], contentEncoding: "base64" },
      status: { type: "string", enum: ["new", "done"] },
    });
    expect(document.paths["/setting/{key}"].get.parameters[0].schema).toEqual({ type: "string" });
    expect(Object.keys(document.paths["/kitchen/{id}"].delete.responses)).toEqual(["200", "400", "401", "403", "404", "409", "500"]);
    expect(document.paths["/math/add"].post.responses["200"].content["application/json"].schema).toEqual({ type: "number" });
  });

  it("is generated once, and gone with enabled: false", async () => {
    const app = build(new App({ db: sqliteMemory() }).procedure("ping", (base) => base.handler(() => "pong")).openapi());
    const first = await request(app, "GET", "/openapi.json");
    const second = await request(app, "GET", "/openapi.json");
    expect(second.body).toEqual(first.body);
    const off = build(new App({ db: sqliteMemory() }).procedure("ping", (base) => base.handler(() => "pong")).openapi({ enabled: false }));
    expect((await request(off, "GET", "/openapi.json")).status).toBe(404);
    expect((await request(off, "POST", "/rest/ping")).status).toBe(404);
  });
});

describe("/docs", () => {
  it("serves Swagger UI from the package, with no inline script and no CDN", async () => {
    const app = build(new App({ name: "Docs", db: sqliteMemory() }).procedure("ping", (base) => base.handler(() => "pong")).openapi());
    const page = await request(app, "GET", "/docs");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(page.body).toContain('<script src="/docs/swagger-ui-bundle.js"></script>');
    expect(page.body).not.toMatch(/<script>|https?:\/\//);
    const bundle = await request(app, "GET", "/docs/swagger-ui-bundle.js");
    expect(bundle.status).toBe(200);
    expect(bundle.body.length).toBeGreaterThan(100_000);
    expect((await request(app, "GET", "/docs/init.js")).body).toContain('"/openapi.json"');
    expect((await request(app, "GET", "/docs/swagger-ui.css")).headers.get("content-type")).toContain("text/css");
  });

  it("moves with docs.path and is off with docs: false", async () => {
    const moved = build(new App({ db: sqliteMemory() }).openapi({ docs: { path: "/reference" } }));
    expect((await request(moved, "GET", "/reference")).status).toBe(200);
    expect((await request(moved, "GET", "/docs")).status).toBe(404);
    const off = build(new App({ db: sqliteMemory() }).openapi({ docs: false }));
    expect((await request(off, "GET", "/docs")).status).toBe(404);
    expect((await request(off, "GET", "/openapi.json")).status).toBe(200);
  });
});

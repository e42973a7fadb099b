// The document says what the REST surface does: streams stay out (never `200 {}`), a mistake gets
// the message /rpc gives, outputs and examples are real, and a reader signs in from /docs.
import { validate, compileErrors } from "@readme/openapi-parser";
import { eventIterator } from "@orpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { liveIterable } from "../../kernel/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { request, rpc, sqliteMemory } from "../support/app.js";
import { ORIGIN } from "../support/auth.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";
const v1 = schema("1")
  .auth()
  .table("author", (t) => ({ id: t.serial().primaryKey(), name: t.text() }))
  .table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text(), authorId: t.integer().nullable().references("author", "id"), publishedAt: t.timestamp().nullable() }))
  .relation("post", (rel) => ({ author: rel.belongsTo("author", { from: "authorId", to: "id" }) }))
  .build();
const PUBLIC = { list: "public", get: "public", create: "public", update: "public", delete: "public" } as const;

function createApp() {
  return new App({ name: "Truth", baseUrl: ORIGIN, db: sqliteMemory() })
    .schema(v1)
    .auth({ secret: SECRET, emailAndPassword: { enabled: true } })
    .resource("post", { permissions: PUBLIC })
    .resource("author", { permissions: PUBLIC })
    .procedure("ticks", (base) =>
      base.handler(async function* () {
        yield 1;
        yield 2;
      }),
    )
    .procedure("clock", (base) => base.output(eventIterator(z.number())).handler(() => liveIterable((async function* () { yield 1; })(), {})))
    .procedure("sneaky", (base) => base.handler(async () => (async function* () { yield 1; })()))
    .procedure("post.stats", (base) => base.output(z.object({ total: z.number().int(), newest: z.string().nullable() })).handler(() => ({ total: 0, newest: null })))
    .procedure("me", (base) => base.handler(({ context }) => ({ email: context.user!.email })), { permission: "authenticated" })
    .openapi();
}

describe("the REST surface and its document tell the truth", () => {
  let app: Awaited<ReturnType<ReturnType<typeof createApp>["start"]>>;
  let document: any;
  beforeAll(async () => {
    app = await createApp().start();
    document = (await request(app, "GET", "/openapi.json")).body;
  });
  afterAll(() => app?.close());

  it("leaves streaming procedures out of REST and the document; an unforeseen stream is 406, never 200 {}", async () => {
    const result = await validate(structuredClone(document));
    if (!result.valid) throw new Error(compileErrors(result));
    expect(Object.keys(document.paths).filter((path) => /ticks|clock|sneaky/.test(path))).toEqual(["/sneaky"]);
    expect((await request(app, "POST", "/rest/ticks")).status).toBe(404);
    expect((await request(app, "POST", "/rest/clock")).status).toBe(404);
    expect(await request(app, "POST", "/rest/sneaky")).toMatchObject({
      status: 406,
      body: { code: "NOT_ACCEPTABLE", status: 406, message: "sneaky answers with a stream of events: call it on /rpc/sneaky" },
    });
    // On /rpc the stream is served as it always was.
    const stream = await app.handle(new Request("http://localhost/rpc/ticks", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }));
    expect([stream.status, stream.headers.get("content-type")]).toEqual([200, "text/event-stream"]);
    await stream.body?.cancel();
  });

  it("answers the same mistake with the same message on REST and /rpc", async () => {
    const viaRpc = await rpc(app, "post.list", { include: { author: true, comments: true } });
    const viaRest = await request(app, "GET", "/rest/post?include[author]=true&include[comments]=true");
    expect(viaRpc.body.message).toBe('"author" cannot be included; includable: none');
    expect([viaRest.status, viaRest.body.message]).toEqual([400, viaRpc.body.message]);
    const getRest = await request(app, "GET", "/rest/post/1?include[author]=true");
    const getRpc = await rpc(app, "post.get", { where: { id: 1 }, include: { author: true } });
    expect([getRest.status, getRest.body.message]).toEqual([400, getRpc.body.message]);
  });

  it("shows a procedure's output schema, and examples that are values, not types", async () => {
    expect(document.paths["/post/stats"].post.responses["200"].content["application/json"].schema).toMatchObject({
      type: "object",
      properties: { total: { type: "integer" }, newest: { anyOf: [{ type: "string" }, { type: "null" }] } },
    });
    const row = document.components.schemas.Post.properties;
    expect(row.title.examples).toEqual(["A title"]);
    expect(row.publishedAt.examples).toEqual(["2026-01-02T03:04:05.000Z"]);
    const body = document.paths["/post"].post.requestBody.content["application/json"].schema.properties;
    expect(body.title.examples).toEqual(["A title"]);
    expect(JSON.stringify(document)).not.toMatch(/"examples?":\s*\[?"string"/);
  });

  it("lets a reader sign up, sign in and call an authenticated operation from the document alone", async () => {
    const operation = (path: string, method: string) => ({ item: document.paths[path][method], url: `${document.paths[path].servers?.[0]?.url ?? document.servers[0].url}${path}` });
    const signUp = operation("/api/auth/sign-up/email", "post");
    expect(signUp.item.security).toEqual([{}]);
    const example = signUp.item.requestBody.content["application/json"].example;
    const send = (url: string, method: string, body?: unknown, cookie?: string) =>
      app.handle(
        new Request(url, {
          method,
          headers: { origin: ORIGIN, ...(body !== undefined && { "content-type": "application/json" }), ...(cookie && { cookie }) },
          ...(body !== undefined && { body: JSON.stringify(body) }),
        }),
      );
    expect((await send(signUp.url, "POST", example)).status).toBe(200);
    const signIn = operation("/api/auth/sign-in/email", "post");
    const signedIn = await send(signIn.url, "POST", signIn.item.requestBody.content["application/json"].example);
    expect(signedIn.status).toBe(200);
    // The cookie the session scheme names is the one sign-in set.
    const scheme = document.components.securitySchemes.session;
    const cookie = signedIn.headers.getSetCookie().map((line) => line.split(";")[0]!).find((pair) => pair.startsWith(`${scheme.name}=`))!;
    expect(cookie).toBeDefined();
    const me = operation("/me", "post");
    expect(me.item.security).toEqual([{ session: [] }]);
    expect((await send(me.url, "POST", undefined)).status).toBe(401);
    const mine = await send(me.url, "POST", undefined, cookie);
    expect([mine.status, await mine.json()]).toEqual([200, { email: example.email }]);
    const session = operation("/api/auth/get-session", "get");
    expect(await (await send(session.url, "GET", undefined, cookie)).json()).toMatchObject({ user: { email: example.email } });
    const signOut = operation("/api/auth/sign-out", "post");
    expect(signOut.item.security).toEqual([{ session: [] }]);
    expect((await send(signOut.url, "POST", signOut.item.requestBody.content["application/json"].example, cookie)).status).toBe(200);
    expect(document.components.schemas.AuthUser).toBeDefined();
  });
});

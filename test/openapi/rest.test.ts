import { compileErrors, validate } from "@readme/openapi-parser";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { App } from "../../presets/trellis.js";
import { z } from "zod";
import { createFixtureApp } from "../resources/fixture.js";
import { closeAfterEach, request, rpc, sqliteMemory } from "../support/app.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";
import { families, openDatabase, type TestDatabase } from "../support/databases.js";

const json = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  headers: { "content-type": "application/json", origin: ORIGIN, ...headers },
  body: JSON.stringify(body),
});

describe.each(families())("/rest/** on %s", (family) => {
  let db: TestDatabase;
  let app: any;
  let ada: SignedIn;
  let bo: SignedIn;
  const onError = vi.fn();

  beforeAll(async () => {
    db = await openDatabase(family);
    app = await createFixtureApp(db, onError)
      .procedure("math.add", (base) => base.input(z.object({ a: z.number(), b: z.number() })).handler(({ input }) => ({ sum: input.a + input.b })))
      .procedure("ping", (base) => base.handler(() => "pong"))
      .procedure("stats.day", (base) =>
        base
          .route({ method: "GET", path: "/stats/{day}" })
          .input(z.object({ day: z.number().int(), detail: z.boolean().optional() }))
          .handler(({ input }) => ({ day: input.day, detail: input.detail ?? false })),
      )
      .procedure("boom", (base) =>
        base.handler(() => {
          throw new Error("database password is hunter2");
        }),
      )
      .openapi()
      .start();
    ada = await signUp(app, `ada-${family}@example.test`);
    bo = await signUp(app, `bo-${family}@example.test`);
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it("creates, reads, updates and deletes a resource with the statuses and bodies of /rpc", async () => {
    const signedOut = await request(app, "POST", "/rest/post", json({ title: "Nope" }));
    expect(signedOut).toMatchObject({ status: 401, body: { code: "UNAUTHORIZED", status: 401, message: "Sign in to call this procedure" } });
    const { defined: _, ...rpcBody } = (await rpc(app, "post.create", { title: "Nope" })).body;
    expect(signedOut.body).toEqual(rpcBody);

    const created = await request(app, "POST", "/rest/post", json({ title: "Hello", views: 7 }, { cookie: ada.cookie }));
    expect(created).toMatchObject({ status: 200, body: { title: "Hello", views: 7, authorId: ada.userId, status: "draft" } });
    expect(created.body.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    const id = created.body.id;

    expect(await request(app, "GET", `/rest/post/${id}`)).toMatchObject({ status: 200, body: { id, title: "Hello" } });
    expect(await request(app, "GET", "/rest/post/999999")).toMatchObject({ status: 404, body: { code: "NOT_FOUND", status: 404 } });
    const badKey = await request(app, "GET", "/rest/post/abc");
    expect(badKey.status).toBe(400);
    expect(badKey.body.message).toMatch(/^Invalid input: where\.id/);

    // A signed-in non-owner gets 404, exactly as on /rpc.
    expect((await request(app, "PATCH", `/rest/post/${id}`, json({ title: "Mine" }, { cookie: bo.cookie }))).status).toBe(404);
    expect(await request(app, "PATCH", `/rest/post/${id}`, json({ title: "Renamed" }, { cookie: ada.cookie }))).toMatchObject({ status: 200, body: { id, title: "Renamed" } });
    const empty = await request(app, "PATCH", `/rest/post/${id}`, json({}, { cookie: ada.cookie }));
    expect(empty).toMatchObject({ status: 400, body: { code: "BAD_REQUEST" } });
    expect(empty.body.message).toContain("Nothing to update");

    expect(await request(app, "DELETE", `/rest/post/${id}`, { headers: { cookie: ada.cookie, origin: ORIGIN } })).toMatchObject({ status: 200, body: { id } });
    expect((await request(app, "GET", `/rest/post/${id}`)).status).toBe(404);
  });

  it("takes list arguments from a bracket-notation query string", async () => {
    for (const [title, views] of [["a", 1], ["b", 5], ["c", 9]] as const) {
      await request(app, "POST", "/rest/post", json({ title, views, status: views > 1 ? "published" : "draft" }, { cookie: ada.cookie }));
    }
    const titles = async (query: string) => {
      const response = await request(app, "GET", `/rest/post?${query}`);
      expect(response.status, `${query}: ${JSON.stringify(response.body)}`).toBe(200);
      return response.body.map((post: { title: string }) => post.title);
    };
    expect(await titles("where[views][gte]=5&orderBy[0][views]=desc")).toEqual(["c", "b"]);
    expect(await titles("where[status]=published&where[title][in][0]=a&where[title][in][1]=b")).toEqual(["b"]);
    expect(await titles("where[OR][0][views]=1&where[OR][1][views]=9&orderBy[0][title]=asc")).toEqual(["a", "c"]);
    expect(await titles("orderBy[0][views]=asc&take=1&skip=1")).toEqual(["b"]);
    const withComments = await request(app, "GET", "/rest/post?take=1&include[comments]=true");
    expect(withComments.body[0].comments).toEqual([]);

    const tooMany = await request(app, "GET", "/rest/post?take=11");
    expect(tooMany).toMatchObject({ status: 400, body: { code: "BAD_REQUEST", message: "take must be at most 10" } });
    expect((await request(app, "GET", "/rest/post?where[nope]=1")).status).toBe(400);
    expect((await request(app, "GET", "/rest/post?take=many")).status).toBe(400);
    expect((await request(app, "GET", "/rest/post?include[secret]=true")).status).toBe(400);
  });

  it("carries every column type as plain JSON: strings for bigint and decimal, base64 bytes, YYYY-MM-DD days", async () => {
    const input = {
      label: "all",
      code: "X1",
      qty: 3,
      big: "9007199254740993",
      price: "12.50",
      ratio: 0.5,
      flag: true,
      at: "2024-03-01T10:20:30.000Z",
      day: "2024-02-29",
      meta: { nested: [1, "two"] },
      ref: "6f1c1f5e-4a3b-4c2d-9e8f-0a1b2c3d4e5f",
      blob: Buffer.from("hello bytes").toString("base64"),
      tags: ["a", "c"],
    };
    const created = await request(app, "POST", "/rest/kitchen", json(input));
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const expected = { ...input, tags: "a,c" };
    expect(created.body).toMatchObject({ ...expected, price: expect.stringMatching(/^12\.50?$/) });
    const read = await request(app, "GET", `/rest/kitchen/${created.body.id}`);
    expect(read.body).toEqual(created.body);
    expect((await request(app, "GET", `/rest/kitchen?where[big]=9007199254740993&where[flag]=true&where[day]=2024-02-29`)).body).toHaveLength(1);
  });

  it("maps other procedures to POST /rest/<a>/<b> with a JSON body", async () => {
    expect(await request(app, "POST", "/rest/math/add", json({ a: 2, b: 3 }))).toMatchObject({ status: 200, body: { sum: 5 } });
    const bad = await request(app, "POST", "/rest/math/add", json({ a: "2" }));
    expect(bad).toMatchObject({ status: 400, body: { code: "BAD_REQUEST" } });
    expect(bad.body.message).toMatch(/^Invalid input: a/);
    const { defined: _, ...rpcBad } = (await rpc(app, "math.add", { a: "2" })).body;
    expect(bad.body).toEqual(rpcBad);
    // No body, an empty body or no content type: no input.
    expect(await request(app, "POST", "/rest/ping")).toMatchObject({ status: 200, body: "pong" });
    expect(await request(app, "POST", "/rest/ping", { body: "" })).toMatchObject({ status: 200, body: "pong" });
    expect(await request(app, "POST", "/rest/math/add", { headers: { "content-type": "application/json" }, body: "{not json" })).toMatchObject({
      status: 400,
      body: { code: "BAD_REQUEST", message: "The request body is not valid JSON" },
    });
  });

  it("mounts a procedure's declared route under /rest, its text parameters coerced by its input schema", async () => {
    expect(await request(app, "GET", "/rest/stats/12?detail=true")).toMatchObject({ status: 200, body: { day: 12, detail: true } });
    const bad = await request(app, "GET", "/rest/stats/twelve");
    expect(bad).toMatchObject({ status: 400, body: { code: "BAD_REQUEST" } });
    expect(bad.body.message).toMatch(/^Invalid input: day/);
    const operation = (await request(app, "GET", "/openapi.json")).body.paths["/stats/{day}"].get;
    expect(operation.operationId).toBe("stats.day");
    expect(operation.parameters).toEqual([
      { name: "day", in: "path", required: true, schema: { type: "integer", minimum: expect.any(Number), maximum: expect.any(Number) } },
      { name: "detail", in: "query", required: false, schema: { type: "boolean" } },
    ]);
  });

  it("refuses a __proto__ key in the query string with a 400", async () => {
    const response = await request(app, "GET", "/rest/post?where[__proto__][title]=x");
    expect(response).toMatchObject({ status: 400, body: { code: "BAD_REQUEST" } });
  });

  it("answers 404 and 405 as plain JSON, and reports unexpected failures with source rest", async () => {
    expect(await request(app, "GET", "/rest/nothing")).toMatchObject({ status: 404, body: { code: "NOT_FOUND", status: 404 } });
    expect((await request(app, "PUT", "/rest/post")).status).toBe(405);
    expect((await request(app, "GET", "/rest/math/add")).status).toBe(405);
    onError.mockClear();
    const boom = await request(app, "POST", "/rest/boom");
    expect(boom).toMatchObject({ status: 500, body: { code: "INTERNAL_SERVER_ERROR", status: 500, message: "Internal server error" } });
    expect(JSON.stringify(boom.body)).not.toContain("hunter2");
    expect(onError).toHaveBeenCalledTimes(1);
    expect(onError.mock.calls[0]![1]).toMatchObject({ source: "rest", requestId: expect.any(String) });
  });

  it("keeps _admin, file and live procedures out", async () => {
    expect((await request(app, "GET", "/rest/_admin/meta")).status).toBe(404);
    const document = (await request(app, "GET", "/openapi.json")).body;
    expect(Object.keys(document.paths).filter((path) => path.startsWith("/_admin") || path.startsWith("/file"))).toEqual([]);
    const result = await validate(structuredClone(document));
    if (!result.valid) throw new Error(compileErrors(result));
  });
});

describe("/rest/** behind the app's edge", () => {
  const build = closeAfterEach();

  it("carries the CORS headers of /rpc, on answers and errors alike", async () => {
    const app = build(new App({ db: sqliteMemory(), cors: { origins: [ORIGIN] } }).procedure("ping", (base) => base.handler(() => "pong")).openapi({ docs: false }));
    const ok = await request(app, "POST", "/rest/ping", { headers: { origin: ORIGIN } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    const missing = await request(app, "GET", "/rest/nope", { headers: { origin: ORIGIN } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    const preflight = await request(app, "OPTIONS", "/rest/ping", { headers: { origin: ORIGIN, "access-control-request-method": "POST" } });
    expect(preflight.status).toBe(204);
  });

  it("is rate limited like /rpc, with the same headers on answers and on the 429", async () => {
    const app = build(new App({ db: sqliteMemory(), rateLimit: { max: 2, windowMs: 60_000 } }).procedure("ping", (base) => base.handler(() => "pong")).openapi({ docs: false }));
    const first = await request(app, "POST", "/rest/ping");
    expect(first.status).toBe(200);
    expect(first.headers.get("ratelimit-limit")).toBe("2");
    expect(first.headers.get("ratelimit-remaining")).toBe("1");
    await request(app, "POST", "/rest/ping");
    const limited = await request(app, "POST", "/rest/ping");
    expect(limited).toMatchObject({ status: 429, body: { code: "TOO_MANY_REQUESTS", status: 429 } });
    expect(limited.headers.get("retry-after")).toMatch(/^\d+$/);
    // The document is not a limited path.
    expect((await request(app, "GET", "/openapi.json")).status).toBe(200);
  });

  it("refuses a body over the app's limit with 413", async () => {
    const app = build(new App({ db: sqliteMemory(), bodyLimit: 64 }).procedure("echo", (base) => base.handler(({ input }) => input)).openapi({ docs: false }));
    const body = JSON.stringify({ text: "x".repeat(200) });
    const response = await request(app, "POST", "/rest/echo", { headers: { "content-type": "application/json", "content-length": String(body.length) }, body });
    expect(response).toMatchObject({ status: 413, body: { code: "PAYLOAD_TOO_LARGE" } });
  });
});

import { describe, expect, it } from "vitest";
import { z } from "zod";
import { definePlugin, type HttpMiddleware } from "../../kernel/index.js";
import { App } from "../../presets/trellis.js";
import { closeAfterEach, request, rpc, sqliteMemory } from "../support/app.js";


const build = closeAfterEach();

/** A session provider that counts its lookups: a credential `x-api-key: <name>` is user `<name>`. */
function countingSessions() {
  const counter = { lookups: 0 };
  const plugin = definePlugin({
    name: "sessions",
    stage: "identity",
    provides: ["session"],
    build(ctx) {
      ctx.hooks.session.tap(async (event) => {
        counter.lookups++;
        const name = event.headers.get("x-api-key");
        return name ? { user: { id: name, email: `${name}@x`, name }, session: { id: "s", userId: name, expiresAt: new Date(8.64e15) } } : undefined;
      });
    },
  });
  return { plugin, counter };
}

describe("request facts", () => {
  it("event.session() is usable from middleware and looked up once per request, shared with procedures", async () => {
    const sessions = countingSessions();
    const seen: (string | undefined)[] = [];
    const peek: HttpMiddleware = async (event, next) => {
      seen.push((await event.session()).user?.id);
      seen.push((await event.session()).user?.id);
      return next();
    };
    const built = build(
      new App({ db: sqliteMemory() })
        .use(sessions.plugin)
        .use(definePlugin({ name: "peek", stage: "edge", build: () => ({ middleware: [peek] }) }))
        .procedure("me", (base) => base.handler(({ context }) => context.user?.id ?? null), { permission: "authenticated" }),
    );
    const response = await rpc(built, "me", undefined, { "x-api-key": "ada" });
    expect(response.body).toBe("ada");
    expect(seen).toEqual(["ada", "ada"]);
    expect(sessions.counter.lookups).toBe(1);

    // Without a credential: anonymous, and no lookup at all.
    await rpc(built, "me");
    expect(sessions.counter.lookups).toBe(1);
  });

  it("carries the client address handle() was given to middleware, routes and nothing else", async () => {
    const built = build(new App({ db: sqliteMemory() }).route("GET", "/ip", (event) => ({ ip: event.clientAddress ?? null })));
    const response = await built.handle(new Request("http://localhost/ip"), { clientAddress: "203.0.113.9" });
    expect(await response.json()).toEqual({ ip: "203.0.113.9" });
    expect((await request(built, "GET", "/ip")).body).toEqual({ ip: null });
  });

  it("applies a route's or a procedure's own body limit once it is matched, the default elsewhere", async () => {
    const big = "x".repeat(2000);
    const built = build(
      new App({ db: sqliteMemory(), bodyLimit: 1000 })
        .route("POST", "/small", async (event) => ({ size: (await event.request.text()).length }))
        .use(
          definePlugin({
            name: "uploads",
            build: (ctx) => ({
              routes: [{ method: "POST", path: "/upload", bodyLimit: 4000, handler: async (event) => ({ size: (await event.request.text()).length }) }],
              procedures: {
                "blob.put": ctx.base.meta({ bodyLimit: 4000 }).input(z.object({ data: z.string() })).handler(({ input }) => input.data.length),
              },
            }),
          }),
        )
        .procedure("note", (base) => base.input(z.object({ data: z.string() })).handler(({ input }) => input.data.length)),
    );
    // As over HTTP/1.1: a declared Content-Length (in-process requests may omit it).
    const sized = (body: string) => ({ body, headers: { "content-length": String(Buffer.byteLength(body)), "content-type": "application/json" } });
    expect((await request(built, "POST", "/small", sized(big))).status).toBe(413);
    expect((await request(built, "POST", "/upload", sized(big))).body).toEqual({ size: 2000 });
    expect((await request(built, "POST", "/upload", sized(big.repeat(3)))).status).toBe(413);
    const json = (data: string) => sized(JSON.stringify({ json: { data } }));
    expect((await request(built, "POST", "/rpc/blob/put", json(big))).body).toEqual({ json: 2000 });
    const refused = await request(built, "POST", "/rpc/note", json(big));
    refused.body = (refused.body as { json: unknown }).json;
    expect(refused.status).toBe(413);
    expect(refused.body).toMatchObject({ code: "PAYLOAD_TOO_LARGE", message: "Request body is larger than 1000 bytes" });

    // Chunked bodies are counted against the same limit.
    const chunked = (size: number) =>
      new Request("http://localhost/upload", {
        method: "POST",
        headers: { "transfer-encoding": "chunked" },
        body: new ReadableStream({ start: (c) => (c.enqueue(new TextEncoder().encode("y".repeat(size))), c.close()) }),
        duplex: "half",
      } as RequestInit);
    expect((await built.handle(chunked(3000))).status).toBe(200);
    expect((await built.handle(chunked(5000))).status).toBe(413);
  });
});

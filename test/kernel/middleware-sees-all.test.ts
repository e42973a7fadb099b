import { afterAll, describe, expect, it } from "vitest";
import { App } from "../../presets/app.js";
import { definePlugin, type HttpMiddleware } from "../../kernel/index.js";
import { request, rpc, sqliteMemory } from "../support/app.js";

describe("HTTP middleware sees the responses the kernel answers itself", () => {
  const seen: string[] = [];
  const log: HttpMiddleware = async (event, next) => {
    const response = await next();
    seen.push(`${event.method} ${event.path} ${response.status}`);
    return response;
  };
  const app = new App({ db: sqliteMemory() })
    .use(definePlugin({ name: "request-log", stage: "edge", build: () => ({ middleware: [log] }) }))
    .route("GET", "/only-get", () => ({ ok: true }))
    .procedure("hello", (base) => base.handler(() => "hello"))
    .build();
  afterAll(() => app.close());

  it("404 for an unknown path or procedure, 405 for a wrong method, with the same bodies as before", async () => {
    expect(await request(app, "GET", "/nowhere")).toMatchObject({ status: 404, body: { code: "NOT_FOUND", message: "No route for GET /nowhere" } });
    expect(await request(app, "DELETE", "/only-get")).toMatchObject({ status: 405, body: { code: "METHOD_NOT_SUPPORTED" } });
    expect(await rpc(app, "missing")).toMatchObject({ status: 404, body: { code: "NOT_FOUND", message: "No procedure at /rpc/missing" } });
    expect((await request(app, "GET", "/rpc/hello")).status).toBe(405);
    expect((await rpc(app, "hello")).body).toBe("hello");
    expect(seen).toEqual(["GET /nowhere 404", "DELETE /only-get 405", "POST /rpc/missing 404", "GET /rpc/hello 405", "POST /rpc/hello 200"]);
  });
});

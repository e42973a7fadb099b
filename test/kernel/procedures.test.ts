import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { App, RpcError } from "../../presets/trellis.js";
import { rpc, request, sqliteMemory, closeAfterEach } from "../support/app.js";

const build = closeAfterEach();

describe("procedures", () => {
  it("serves a procedure at /rpc/<name> with validated input", async () => {
    const app = build(
      new App({ db: sqliteMemory() }).procedure("greet", (base) =>
        base.input(z.object({ name: z.string().min(1) })).handler(({ input }) => ({ message: `hello ${input.name}` })),
      ),
    );
    expect(await rpc(app, "greet", { name: "Ada" })).toMatchObject({ status: 200, body: { message: "hello Ada" } });
  });

  it("turns dots into path segments", async () => {
    const app = build(new App({ db: sqliteMemory() }).procedure("user.profile.me", (base) => base.handler(() => "me")));
    const response = await app.handle(new Request("http://localhost/rpc/user/profile/me", { method: "POST", body: "{}", headers: { "content-type": "application/json" } }));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ json: "me" });
  });

  it("answers invalid input with 400 naming the field", async () => {
    const app = build(
      new App({ db: sqliteMemory() }).procedure("greet", (base) =>
        base.input(z.object({ name: z.string().min(1) })).handler(({ input }) => input.name),
      ),
    );
    const result = await rpc(app, "greet", { name: "" });
    expect(result.status).toBe(400);
    expect(result.body).toMatchObject({ code: "BAD_REQUEST", status: 400 });
    expect(result.body.message).toMatch(/^Invalid input: name: /);
  });

  it("rejects duplicate names and the reserved _admin namespace at the call", () => {
    const app = new App({ db: sqliteMemory() }).procedure("a", (base) => base.handler(() => 1));
    expect(() => app.procedure("a", (base) => base.handler(() => 2))).toThrow(/already registered/);
    expect(() => app.procedure("_admin.meta", (base) => base.handler(() => 2))).toThrow(/reserved "_admin"/);
    expect(() => app.procedure("bad name", (base) => base.handler(() => 2))).toThrow(/invalid/);
    expect(() => app.procedure("__proto__.polluted", (base) => base.handler(() => 2))).toThrow(/reserved segment "__proto__"/);
    expect(() => app.procedure("user.constructor", (base) => base.handler(() => 2))).toThrow(/reserved segment "constructor"/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("refuses to build when a non-public permission has no .auth(), naming every procedure", () => {
    const app = new App({ db: sqliteMemory() })
      .procedure("me", (base) => base.handler(() => 1), { permission: "authenticated" })
      .procedure("stats", (base) => base.handler(() => 1), { permission: "admin" })
      .procedure("open", (base) => base.handler(() => 1));
    expect(() => app.build()).toThrow(/procedure "me" \(permission "authenticated"\); procedure "stats" \(permission "admin"\)/);
  });

  it("merges middleware context into later procedures only", async () => {
    const app = build(
      new App({ db: sqliteMemory() })
        .procedure("before", (base) => base.handler(({ context }) => ("tenant" in context ? "has" : "none")))
        .middleware(({ next }) => next({ context: { tenant: "acme" } }))
        .procedure("after", (base) => base.handler(({ context }) => context.tenant.toUpperCase())),
    );
    expect((await rpc(app, "before")).body).toBe("none");
    expect((await rpc(app, "after")).body).toBe("ACME");
  });

  it("exposes secrets and kv on the context", async () => {
    const { memorySecrets } = await import("../../kernel/secrets/index.js");
    const { memoryKV } = await import("../../kernel/kv/index.js");
    const app = build(
      new App({ db: sqliteMemory(), secrets: memorySecrets({ API_TOKEN: "t0k" }), kv: memoryKV() }).procedure("probe", (base) =>
        base.handler(async ({ context }) => {
          await context.kv!.setItem("k", "v");
          return { token: context.secrets!.require("API_TOKEN"), kv: await context.kv!.getItem("k") };
        }),
      ),
    );
    expect((await rpc(app, "probe")).body).toEqual({ token: "t0k", kv: "v" });
  });
});

describe("errors", () => {
  it("sends a deliberate RpcError with its status and never reports it", async () => {
    const onError = vi.fn();
    const app = build(
      new App({ db: sqliteMemory(), onError }).procedure("conflict", (base) =>
        base.handler(() => {
          throw new RpcError("CONFLICT", { message: "already taken", data: { field: "slug" } });
        }),
      ),
    );
    const result = await rpc(app, "conflict");
    expect(result.status).toBe(409);
    expect(result.body).toMatchObject({ code: "CONFLICT", status: 409, message: "already taken", data: { field: "slug" } });
    expect(onError).not.toHaveBeenCalled();
  });

  it("turns an unexpected failure into a bare 500 and reports it with source rpc", async () => {
    const onError = vi.fn();
    const app = build(
      new App({ db: sqliteMemory(), onError }).procedure("boom", (base) =>
        base.handler(() => {
          throw new Error("secret internals: password=hunter2");
        }),
      ),
    );
    const result = await rpc(app, "boom");
    expect(result.status).toBe(500);
    expect(result.body).toMatchObject({ code: "INTERNAL_SERVER_ERROR", message: "Internal server error" });
    expect(JSON.stringify(result.body)).not.toContain("hunter2");
    expect(onError).toHaveBeenCalledTimes(1);
    expect(onError.mock.calls[0][0]).toBeInstanceOf(Error);
    expect(onError.mock.calls[0][1]).toEqual({ source: "rpc", requestId: expect.any(String), method: "POST", path: "/rpc/boom", procedure: "boom" });
  });

  it("reports route failures with source route, and survives a throwing onError", async () => {
    const onError = vi.fn(() => {
      throw new Error("reporter down");
    });
    const spy = vi.spyOn(console, "error").mockImplementation(() => {});
    const app = build(
      new App({ db: sqliteMemory(), onError }).route("GET", "/explode", () => {
        throw new Error("kaboom");
      }),
    );
    const result = await request(app, "GET", "/explode");
    expect(result.status).toBe(500);
    expect(result.body).toEqual({ code: "INTERNAL_SERVER_ERROR", status: 500, message: "Internal server error" });
    expect(onError).toHaveBeenCalledWith(expect.any(Error), expect.objectContaining({ source: "route", method: "GET", path: "/explode" }));
    spy.mockRestore();
  });

  it("answers unknown paths with 404 JSON, a wrong method with 405, and unknown procedures in the RPC envelope", async () => {
    const app = build(new App({ db: sqliteMemory() }).route("GET", "/only-get", () => ({ ok: true })));
    expect(await request(app, "GET", "/nowhere")).toMatchObject({ status: 404, body: { code: "NOT_FOUND", status: 404 } });
    expect(await request(app, "DELETE", "/only-get")).toMatchObject({ status: 405, body: { status: 405 } });
    const missing = await rpc(app, "nope");
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ code: "NOT_FOUND", defined: false });
  });

  it("the default onError logs to the console; an empty function silences it", async () => {
    const spy = vi.spyOn(console, "error").mockImplementation(() => {});
    const loud = build(new App({ db: sqliteMemory() }).procedure("boom", (base) => base.handler(() => { throw new Error("x"); })));
    await rpc(loud, "boom");
    expect(spy).toHaveBeenCalled();
    spy.mockClear();
    const quiet = build(new App({ db: sqliteMemory(), onError: () => {} }).procedure("boom", (base) => base.handler(() => { throw new Error("x"); })));
    await rpc(quiet, "boom");
    expect(spy).not.toHaveBeenCalled();
    spy.mockRestore();
  });
});

describe("client()", () => {
  it("calls procedures in process, evaluating a headers function on every call", async () => {
    let calls = 0;
    const app = build(
      new App({ db: sqliteMemory() })
        .procedure("echo", (base) => base.handler(({ context }) => context.headers.get("x-tenant")))
        .procedure("math.double", (base) => base.input(z.number()).handler(({ input }) => input * 2)),
    );
    const client = app.client(() => ({ "x-tenant": `t${++calls}` }));
    expect(await client.echo()).toBe("t1");
    expect(await client.echo()).toBe("t2");
    expect(await client.math.double(21)).toBe(42);
  });

  it("throws RpcError to the caller", async () => {
    const app = build(
      new App({ db: sqliteMemory() }).procedure("deny", (base) =>
        base.handler(() => {
          throw new RpcError("FORBIDDEN", { message: "no" });
        }),
      ),
    );
    await expect(app.client().deny()).rejects.toMatchObject({ code: "FORBIDDEN", status: 403 });
  });
});

describe("lifecycle", () => {
  it("refuses registrations after build and closes idempotently", async () => {
    const app = new App({ db: sqliteMemory() });
    const built = app.build();
    expect(() => app.procedure("late", (base) => base.handler(() => 1))).toThrow(/after build/);
    await built.close();
    await built.close();
  });
});

describe("what reaches onError", () => {
  it("reports a failure to encode a procedure's output, once, with a bare 500", async () => {
    const onError = vi.fn();
    const app = build(
      new App({ db: sqliteMemory(), onError }).procedure("loop", (base) =>
        base.handler(() => {
          const value: Record<string, unknown> = {};
          value.self = value;
          return value;
        }),
      ),
    );
    const result = await rpc(app, "loop");
    expect(result.status).toBe(500);
    expect(result.body).toMatchObject({ code: "INTERNAL_SERVER_ERROR", message: "Internal server error" });
    expect(onError).toHaveBeenCalledTimes(1);
    expect(onError.mock.calls[0][1]).toMatchObject({ source: "rpc", procedure: "loop" });
  });

  it("does not report malformed request bodies", async () => {
    const onError = vi.fn();
    const app = build(new App({ db: sqliteMemory(), onError }).procedure("p", (base) => base.handler(() => 1)));
    const response = await app.handle(new Request("http://localhost/rpc/p", { method: "POST", headers: { "content-type": "application/json" }, body: "{not json" }));
    expect(response.status).toBe(400);
    expect(onError).not.toHaveBeenCalled();
  });

  it("treats a foreign error that carries status 400 as unexpected: 500, reported, message hidden", async () => {
    const onError = vi.fn();
    const app = build(
      new App({ db: sqliteMemory(), onError }).procedure("upstream", (base) =>
        base.handler(() => {
          throw Object.assign(new Error("upstream said: internal token abc123 rejected"), { status: 400 });
        }),
      ),
    );
    const result = await rpc(app, "upstream");
    expect(result.status).toBe(500);
    expect(JSON.stringify(result.body)).not.toContain("abc123");
    expect(onError).toHaveBeenCalledTimes(1);
  });

  it("gives client() callers an RpcError, reported, when building the context fails", async () => {
    const onError = vi.fn();
    const app = build(new App({ db: sqliteMemory(), onError }).procedure("p", (base) => base.handler(() => 1)));
    const client = app.client(() => {
      throw new Error("headers unavailable");
    });
    await expect(client.p()).rejects.toMatchObject({ code: "INTERNAL_SERVER_ERROR", status: 500, message: "Internal server error" });
    expect(onError).toHaveBeenCalledWith(expect.objectContaining({ message: "headers unavailable" }), { source: "rpc" });
  });
});

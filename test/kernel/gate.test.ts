import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { definePlugin, RpcError, type SealedApp } from "../../kernel/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { closeAfterEach, rpc, sqliteMemory } from "../support/app.js";

const build = closeAfterEach();
const v1 = schema("1").table("item", (t) => ({ id: t.serial().primaryKey(), name: t.text().unique() })).build();

/** A plugin that keeps the sealed app, as a surface (REST, MCP, live) would. */
function capture() {
  const box: { sealed?: SealedApp } = {};
  const plugin = definePlugin({ name: "capture", stage: "surface", build: (ctx) => ctx.hooks.sealed.tap((sealed) => (box.sealed = sealed)) });
  return { plugin, get sealed() {
    return box.sealed!;
  } };
}

async function app(onError = vi.fn()) {
  const surface = capture();
  const built = build(
    new App({ db: sqliteMemory(), onError })
      .schema(v1)
      .resource("item")
      .procedure("echo", (base) => base.input(z.object({ n: z.number() })).handler(({ input }) => input.n))
      .procedure("boom", (base) => base.handler(() => {
        throw new Error("secret internals");
      }))
      .procedure("count", (base) =>
        base.handler(async function* () {
          yield 1;
          throw new Error("stream broke");
        }),
      )
      .use(surface.plugin),
  );
  await built.migrator.migrateToLatest();
  return { built, surface, onError };
}

const statusOf = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (error) {
    return { status: (error as RpcError<any, any>).status, message: (error as RpcError<any, any>).message };
  }
  throw new Error("expected a rejection");
};

describe("the gate: sealed.call", () => {
  it("runs a procedure and resolves its output", async () => {
    const { surface } = await app();
    expect(await surface.sealed.call("echo", { n: 2 }, { source: "rest" })).toBe(2);
    const created = await surface.sealed.call("item.create", { name: "a" }, { source: "rest" });
    expect(created).toMatchObject({ id: 1, name: "a" });
  });

  it("answers exactly what /rpc answers: validation, database conflicts, missing procedures", async () => {
    const { built, surface } = await app();
    const viaGate = await statusOf(surface.sealed.call("echo", { n: "x" }, { source: "rest" }));
    const viaRpc = await rpc(built, "echo", { n: "x" });
    expect(viaGate).toEqual({ status: viaRpc.status, message: viaRpc.body.message });
    expect(viaGate.status).toBe(400);

    await surface.sealed.call("item.create", { name: "same" }, { source: "rest" });
    expect((await statusOf(surface.sealed.call("item.create", { name: "same" }, { source: "rest" }))).status).toBe(409);
    expect(await statusOf(surface.sealed.call("nope", {}, { source: "rest" }))).toEqual({ status: 404, message: 'No procedure named "nope"' });
  });

  it("reports an unexpected failure once, with the caller's source, and hides it behind a 500", async () => {
    const { surface, onError } = await app();
    expect(await statusOf(surface.sealed.call("boom", undefined, { source: "mcp" }))).toEqual({ status: 500, message: "Internal server error" });
    expect(onError).toHaveBeenCalledTimes(1);
    expect(onError.mock.calls[0]![0]).toMatchObject({ message: "secret internals" });
    expect(onError.mock.calls[0]![1]).toEqual({ source: "mcp" });
  });

  it("maps an error raised while a stream iterates, and toError maps like /rpc", async () => {
    const { surface, onError } = await app();
    const stream = (await surface.sealed.call("count", undefined, { source: "rpc" })) as AsyncIterableIterator<number>;
    expect(await stream.next()).toEqual({ done: false, value: 1 });
    const failure = await stream.next().catch((error: RpcError<any, any>) => error);
    expect(failure).toBeInstanceOf(RpcError);
    expect((failure as RpcError<any, any>).status).toBe(500);
    expect(onError).toHaveBeenCalledWith(expect.objectContaining({ message: "stream broke" }), { source: "rpc" });

    const mapped = surface.sealed.toError(new RpcError("CONFLICT", { message: "taken" }), "rest");
    expect([mapped.status, mapped.message]).toEqual([409, "taken"]);
    expect(surface.sealed.toError(new Error("x"), "route").status).toBe(500);
  });

  it("builds the caller's context from headers or takes one already built", async () => {
    const surface = capture();
    const seen: unknown[] = [];
    build(
      new App({ db: sqliteMemory() })
        .procedure("who", (base) => base.handler(({ context }) => (seen.push(context.headers.get("x-who")), "ok")))
        .use(surface.plugin),
    );
    await surface.sealed.call("who", undefined, { source: "rest", headers: { "x-who": "a" } });
    const context = await surface.sealed.createContext(new (await import("../../kernel/index.js")).RequestEvent(new Request("http://x/", { headers: { "x-who": "b" } })));
    await surface.sealed.call("who", undefined, { source: "rest", context });
    expect(seen).toEqual(["a", "b"]);
  });
});

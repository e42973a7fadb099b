import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { definePlugin, Kernel, type AppRpcContext } from "../../kernel/index.js";
import { schema } from "../../kernel/schema/index.js";
import { memoryKV } from "../../kernel/kv/index.js";
import { App } from "../../presets/trellis.js";
import { closeAfterEach, errorOf, rpc, sqliteMemory } from "../support/app.js";

const build = closeAfterEach();

describe("services", () => {
  it("puts a service provided with { context: true } on every request context, and the constructor's stores too", async () => {
    const kv = memoryKV();
    const mailer = { send: (to: string) => `sent to ${to}` };
    const built = build(
      new App({ db: sqliteMemory(), kv })
        .use(definePlugin({ name: "mailer", build: (ctx) => ctx.provide("mailer", mailer, { context: true }) }))
        .procedure("send", (base) =>
          base.handler(({ context }) => {
            const ctx = context as unknown as AppRpcContext & { mailer: typeof mailer };
            return { sent: ctx.mailer.send("ada"), kv: ctx.kv === kv, storage: "storage" in ctx };
          }),
        ),
    );
    expect((await rpc(built, "send")).body).toEqual({ sent: "sent to ada", kv: true, storage: false });
  });

  it("reads services through need/want: a declared dependency, optional ones absent without an error", () => {
    const read: Record<string, unknown> = {};
    const kernel = new Kernel({ db: sqliteMemory(), services: { clock: "app clock" } });
    kernel.use(definePlugin({ name: "provider", build: (ctx) => ctx.provide("greeting", "hello") }));
    kernel.use(
      definePlugin({
        name: "consumer",
        dependencies: ["provider"],
        optionalDependencies: ["absent"],
        build(ctx) {
          read.need = ctx.need("greeting");
          read.clock = ctx.need("clock");
          read.want = ctx.want("nothing");
          read.bag = (ctx.resources as unknown as Record<string, unknown>).greeting;
        },
      }),
    );
    kernel.build();
    expect(read).toEqual({ need: "hello", clock: "app clock", want: undefined, bag: "hello" });
  });

  it("orders optional dependencies when they are registered, whatever the registration order", () => {
    const order: string[] = [];
    const kernel = new Kernel({ db: sqliteMemory() });
    kernel.use(definePlugin({ name: "late", optionalDependencies: ["early"], build: () => void order.push("late") }));
    kernel.use(definePlugin({ name: "early", build: () => void order.push("early") }));
    kernel.build();
    expect(order).toEqual(["early", "late"]);
  });

  it("refuses to read a service of an undeclared plugin, and names a missing one", () => {
    const kernel = new Kernel({ db: sqliteMemory() });
    kernel.use(definePlugin({ name: "provider", build: (ctx) => ctx.provide("greeting", "hello") }));
    kernel.use(definePlugin({ name: "sneaky", stage: "surface", build: (ctx) => void ctx.need("greeting") }));
    expect(errorOf(() => kernel.build())).toMatchObject({ code: "KERNEL_UNDECLARED_DEPENDENCY" });

    const lonely = new Kernel({ db: sqliteMemory() });
    lonely.use(definePlugin({ name: "lonely", build: (ctx) => void ctx.need("nothing") }));
    expect(errorOf(() => lonely.build()).message).toContain('Nothing provides "nothing" to plugin "lonely"');
  });

  it("the kernel's wiring names no feature: no auth, storage, secrets or kv in the request path", () => {
    for (const file of ["running.ts", "kernel.ts", "context.ts"].map((name) => join(import.meta.dirname, "../../kernel", name))) {
      const code = readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
      const named = code.match(/\b(?:options|context|resources)\.(auth|storage|secrets|kv)\b|"(?:auth|storage|secrets|kv)"/g) ?? [];
      expect({ file, named }).toEqual({ file, named: [] });
    }
  });
});

describe("reserved namespaces", () => {
  const v1 = schema("1").table("item", (t) => ({ id: t.serial().primaryKey() })).build();

  it("refuses _admin procedures from the facade at the call and from other plugins at build", () => {
    const app = new App({ db: sqliteMemory() }).schema(v1);
    expect(errorOf(() => app.procedure("_admin.peek", (base) => base.handler(() => 1)))).toMatchObject({ code: "KERNEL_RESERVED_NAME" });

    const intruder = new App({ db: sqliteMemory() }).use(
      definePlugin({ name: "intruder", build: (ctx) => ({ procedures: { "_admin.peek": ctx.base.handler(() => 1) } }) }),
    );
    expect(errorOf(() => intruder.build())).toMatchObject({ code: "KERNEL_RESERVED_NAME", plugin: "intruder" });
  });

  it("lets a plugin reserve its own namespace for itself", async () => {
    const owner = definePlugin({
      name: "billing",
      validate: (ctx) => ctx.reserve("billing"),
      build: (ctx) => ({ procedures: { "billing.total": ctx.base.handler(() => 42) } }),
    });
    const built = build(new App({ db: sqliteMemory() }).use(owner));
    expect((await rpc(built, "billing.total")).body).toBe(42);

    const other = definePlugin({ name: "other", stage: "surface", build: (ctx) => ({ procedures: { "billing.refund": ctx.base.handler(() => 0) } }) });
    expect(errorOf(() => new App({ db: sqliteMemory() }).use(owner).use(other).build())).toMatchObject({ code: "KERNEL_RESERVED_NAME" });
    const facade = new App({ db: sqliteMemory() }).use(owner).procedure("billing.hack", (base) => base.handler(() => 0));
    expect(errorOf(() => facade.build())).toMatchObject({ code: "KERNEL_RESERVED_NAME" });
  });
});

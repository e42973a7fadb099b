import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { fromEnv, fromRecord, fromSchema, memorySecrets } from "../../kernel/secrets/index.js";
import { memoryKV } from "../../kernel/kv/index.js";

describe("secrets", () => {
  it("require() returns set values and throws naming unset or empty keys", () => {
    const secrets = fromRecord({ A: "1", EMPTY: "", NONE: undefined as string | undefined });
    expect(secrets.get("A")).toBe("1");
    expect(secrets.require("A")).toBe("1");
    expect(() => secrets.require("EMPTY")).toThrow('Secret "EMPTY" is required but empty');
    expect(() => secrets.require("NONE")).toThrow('Secret "NONE" is required but not set');
  });

  it("keeps all read-only", () => {
    const secrets = memorySecrets({ A: "1" });
    expect(Object.isFrozen(secrets.all)).toBe(true);
    expect(() => {
      (secrets.all as Record<string, string>).A = "2";
    }).toThrow(TypeError);
    expect(secrets.get("A")).toBe("1");
  });

  it("reads the process environment", () => {
    process.env.TRELLIS_TEST_SECRET = "from-env";
    expect(fromEnv().get("TRELLIS_TEST_SECRET")).toBe("from-env");
    delete process.env.TRELLIS_TEST_SECRET;
  });

  it("validates and types the environment with any Standard Schema, with a readable error", () => {
    const env = z.object({ PORT: z.coerce.number().int(), API_KEY: z.string().min(8) });
    const secrets = fromSchema(env, { PORT: "8080", API_KEY: "long-enough" });
    const port: number = secrets.get("PORT");
    expect(port).toBe(8080);
    expect(() => fromSchema(env, { PORT: "eighty", API_KEY: "short" })).toThrow(/Invalid environment:\n {2}- PORT: .+\n {2}- API_KEY: .+/);
  });
});

describe("memory KV", () => {
  afterEach(() => vi.useRealTimers());

  it("stores, lists, removes and clears", async () => {
    const kv = memoryKV();
    await kv.setItem("a:1", { n: 1 });
    await kv.setItem("a:2", "two");
    await kv.setItem("b:1", true);
    expect(await kv.getItem("a:1")).toEqual({ n: 1 });
    expect((await kv.getKeys("a:")).sort()).toEqual(["a:1", "a:2"]);
    await kv.removeItem("a:1");
    expect(await kv.hasItem("a:1")).toBe(false);
    await kv.clear("a:");
    expect(await kv.getKeys()).toEqual(["b:1"]);
    expect(await kv.getItem("missing")).toBeNull();
  });

  it("honours setItem(key, value, { ttl }) in seconds", async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const kv = memoryKV();
    await kv.setItem("session", "s", { ttl: 10 });
    await kv.setItem("forever", "f");
    vi.setSystemTime(1_000_000 + 9_999);
    expect(await kv.getItem("session")).toBe("s");
    vi.setSystemTime(1_000_000 + 10_000);
    expect(await kv.getItem("session")).toBeNull();
    expect(await kv.hasItem("session")).toBe(false);
    expect(await kv.getKeys()).toEqual(["forever"]);
  });
});

import { builtinModules, createRequire } from "node:module";
import vm from "node:vm";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";

/**
 * Edge workers have the web platform's globals but no `process`. Each entry is bundled as a
 * worker's bundler would (optional peers left out), then evaluated in a context holding only web
 * globals, so any `process` reached at import time or by a call fails as it would there.
 */
const WEB_GLOBALS = [
  "console", "setTimeout", "clearTimeout", "setInterval", "clearInterval", "queueMicrotask", "structuredClone",
  "URL", "URLSearchParams", "TextEncoder", "TextDecoder", "Request", "Response", "Headers", "fetch", "FormData", "Blob", "File",
  "crypto", "AbortController", "AbortSignal", "Event", "EventTarget", "atob", "btoa", "ReadableStream", "WritableStream",
  "TransformStream", "performance", "WebAssembly", "DOMException", "BroadcastChannel", "MessageChannel",
] as const;
const OPTIONAL_PEERS = ["pg", "better-sqlite3", "ioredis", "pino", "@aws-sdk/*", "@electric-sql/*", "@modelcontextprotocol/*", "@better-auth/api-key", "@orpc/openapi", "@orpc/zod", "@orpc/json-schema", "swagger-ui-dist"];

async function loadWithoutProcess(entry: string): Promise<Record<string, any>> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: "cjs",
    platform: "neutral",
    mainFields: ["module", "main"],
    conditions: ["worker", "import", "default"],
    external: [...OPTIONAL_PEERS, ...builtinModules, ...builtinModules.map((name) => `node:${name}`)],
    // CommonJS for node:vm, but a worker's bundle is a module with a URL of its own.
    define: { "import.meta.url": JSON.stringify("file:///worker/index.js") },
    logLevel: "silent",
  });
  const sandbox: Record<string, unknown> = { module: { exports: {} } };
  for (const name of WEB_GLOBALS) if (name in globalThis) sandbox[name] = (globalThis as any)[name];
  // What an edge runtime's Node compatibility offers: built-in modules, never the `process` global.
  sandbox.require = (id: string) => {
    if (builtinModules.includes(id.replace(/^node:/, ""))) return requireBuiltin(id);
    throw new Error(`Cannot find module "${id}" on this runtime`);
  };
  (sandbox.module as any).exports = {};
  sandbox.exports = (sandbox.module as any).exports;
  const context = vm.createContext(sandbox);
  expect(vm.runInContext("typeof process", context)).toBe("undefined");
  // vm scripts cannot `import()` without a Node flag: dynamic imports go through the same lookup.
  sandbox.__import = async (id: string) => (sandbox.require as (id: string) => unknown)(id);
  vm.runInContext(result.outputFiles[0]!.text.replace(/\bimport\(/g, "__import("), context);
  return (sandbox.module as any).exports;
}

const requireBuiltin = createRequire(import.meta.url);

describe("on a runtime without process", () => {
  it("the secrets entry imports, and fromEnv() with no argument is an empty source", async () => {
    const secrets = await loadWithoutProcess("kernel/secrets/index.ts");
    const env = secrets.fromEnv();
    expect(env.all).toEqual({});
    expect(env.get("ANYTHING")).toBeUndefined();
    expect(() => env.require("API_KEY")).toThrow('Secret "API_KEY" is required but not set');
    expect(secrets.fromRecord({ A: "1" }).get("A")).toBe("1");
  });

  it("trellis imports, and an app built on it answers a request", async () => {
    const trellis = await loadWithoutProcess("presets/trellis.ts");
    expect(typeof trellis.App).toBe("function");
    const kysely = await loadWithoutProcess("node_modules/kysely/dist/esm/index.js");
    // A database that answers nothing: enough for a procedure that does not query.
    const dialect = {
      createAdapter: () => new kysely.PostgresAdapter(),
      createDriver: () => new kysely.DummyDriver(),
      createIntrospector: (db: unknown) => new kysely.PostgresIntrospector(db),
      createQueryCompiler: () => new kysely.PostgresQueryCompiler(),
    };
    const app = new trellis.App({ db: { dialect, kind: "postgres" }, onError: () => {} })
      .procedure("hello", (base: any) => base.handler(() => ({ hi: "edge" })))
      .build();
    const response = await app.handle(new Request("http://edge/rpc/hello", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ json: { hi: "edge" } });
    await app.close();
  });
});

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { embedded } from "../../kernel/embedded/index.js";

const root = mkdtempSync(join(tmpdir(), "trellis-wasm-module-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// PGlite's own loading reads pglite.wasm (9 MB) into a buffer of glibc's allocator; once a collection
// frees it, glibc keeps up to twice that much free in every thread's arena for the life of the
// process (docs/operations.md#memory). The instance is given the module compiled from bytes V8 maps
// itself instead (kernel/embedded/wasm-module.ts): no WebAssembly module is instantiated from bytes.
it("instantiates PGlite from its compiled module, never from a buffer of the module's bytes", async () => {
  const instantiate = WebAssembly.instantiate;
  const fromBytes: number[] = [];
  WebAssembly.instantiate = ((source: BufferSource | WebAssembly.Module, imports?: WebAssembly.Imports) => {
    if (!(source instanceof WebAssembly.Module)) fromBytes.push(source.byteLength);
    return instantiate(source as BufferSource, imports);
  }) as typeof WebAssembly.instantiate;
  const database = embedded({ dataDir: join(root, "data"), thread: "main" });
  try {
    await database.ready();
    expect((await database.client.query<{ one: number }>("select 1 as one")).rows).toEqual([{ one: 1 }]);
  } finally {
    WebAssembly.instantiate = instantiate;
    await database.close();
  }
  // pgvector's side module (well under 1 MB) is PGlite's business; PGlite's own 9 MB module is not.
  expect(fromBytes.filter((bytes) => bytes > 1 << 20)).toEqual([]);
}, 60_000);

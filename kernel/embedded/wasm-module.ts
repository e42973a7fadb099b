import { open } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { Extension } from "@electric-sql/pglite";

/**
 * PGlite's WebAssembly module, compiled once per thread from bytes read into memory V8 maps itself.
 * PGlite reads its 9 MB `pglite.wasm` with `readFile`: a buffer from glibc's allocator, its own
 * mapping at that size, and freed once a collection finds it. Freeing a block that large raises
 * glibc's mmap and trim thresholds for the whole process (up to twice the block kept free at the top
 * of every thread's arena instead of given back): 30 to 40 MB more resident after start, depending
 * on whether a collection had freed it by then. The bytes of a `WebAssembly.Memory` are mapped and
 * unmapped by V8 directly, so they leave the allocator as it was (docs/operations.md#memory).
 */
let compiled: Promise<WebAssembly.Module> | undefined;

export function pgliteModule(): Promise<WebAssembly.Module> {
  return (compiled ??= (async () => {
    const file = await open(join(dirname(createRequire(import.meta.url).resolve("@electric-sql/pglite")), "pglite.wasm"));
    try {
      const { size } = await file.stat();
      const bytes = new Uint8Array(new WebAssembly.Memory({ initial: Math.ceil(size / 65536) }).buffer, 0, size);
      for (let read = 0; read < size; ) {
        const { bytesRead } = await file.read(bytes, read, size - read, read);
        if (bytesRead === 0) throw new Error("pglite.wasm ended early");
        read += bytesRead;
      }
      return await WebAssembly.compile(bytes);
    } finally {
      await file.close();
    }
  })());
}

/**
 * An extension in name only: its setup has PGlite instantiate the module above instead of reading
 * its own. Any failure to read or compile it falls back to PGlite's own loading.
 */
export const compiledModule: Extension = {
  name: "trellis-wasm-module",
  setup: async (_pg, emscriptenOpts: any) => {
    const original = emscriptenOpts.instantiateWasm as (imports: WebAssembly.Imports, receive: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void) => object;
    const module = await pgliteModule().catch(() => undefined);
    if (!module || !original) return {};
    const instantiateWasm = (imports: WebAssembly.Imports, receive: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void) => {
      WebAssembly.instantiate(module, imports).then(
        (instance) => receive(instance, module),
        () => original(imports, receive),
      );
      return {};
    };
    return { emscriptenOpts: { ...emscriptenOpts, instantiateWasm } };
  },
};

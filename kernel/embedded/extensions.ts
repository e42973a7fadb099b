import type { Extension } from "@electric-sql/pglite";

/**
 * pgvector ships apart from PGlite (`@electric-sql/pglite-pgvector`, an optional peer).
 * Loaded once per process; absent, the embedded database runs without it.
 */
let pgvector: Promise<Extension | undefined> | undefined;

export function loadVector(): Promise<Extension | undefined> {
  return (pgvector ??= import("@electric-sql/pglite-pgvector").then(
    (module) => module.vector as Extension,
    (error: NodeJS.ErrnoException) => {
      // Missing is fine; installed but broken is a real failure.
      if (error.code === "ERR_MODULE_NOT_FOUND" || error.code === "MODULE_NOT_FOUND") return undefined;
      throw error;
    },
  ));
}

/**
 * The vector extension for `new PGlite()`, which takes extensions synchronously: its setup
 * runs during PGlite's own asynchronous start, so the import can happen there.
 */
export const lazyVector: Extension = {
  name: "pgvector",
  setup: async (pg, emscriptenOpts, clientOnly) => {
    const vector = await loadVector();
    return vector ? vector.setup(pg, emscriptenOpts, clientOnly) : {};
  },
};

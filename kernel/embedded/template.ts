import { PGlite } from "@electric-sql/pglite";
import { loadVector } from "./extensions.js";
import { readCachedTemplate, templateCachePath, writeCachedTemplate } from "./template-cache.js";

/**
 * A fresh PGlite runs initdb: about 3 s and several hundred MB. Loading a dump of a
 * prepared instance takes about 0.5 s. So the first `memory://` database of a process
 * builds a template once (a dedicated instance, initdb plus extensions, dumped and closed,
 * so no user query can ever end up in it) and every `memory://` database starts from it. The
 * template is also kept on disk (template-cache.ts), so later processes skip initdb altogether.
 */
let template: Promise<Blob> | undefined;
/** @internal where this process's template came from, for tests and the start-up figures. */
let origin: "disk" | "built" | undefined;

export function templateOrigin(): "disk" | "built" | undefined {
  return origin;
}

export function memoryTemplate(): Promise<Blob> {
  template ??= buildTemplate().catch((error: unknown) => {
    template = undefined; // let a later database try again
    throw error;
  });
  return template;
}

async function buildTemplate(): Promise<Blob> {
  const vector = await loadVector();
  const cachePath = templateCachePath(vector ? "vector" : "");
  const cached = readCachedTemplate(cachePath);
  if (cached) {
    origin = "disk";
    return cached;
  }
  const pglite = await PGlite.create("memory://", { extensions: vector ? { vector } : {} });
  try {
    if (vector) await pglite.exec("create extension if not exists vector");
    const dump = await pglite.dumpDataDir("none");
    await writeCachedTemplate(cachePath, dump);
    origin = "built";
    return dump;
  } finally {
    await pglite.close();
  }
}

/**
 * The template as a Blob available at once: `new PGlite()` must be created synchronously
 * (so `embedded()` can hand out its client), while the template may still be building.
 * PGlite reads `loadDataDir` through `arrayBuffer()` during its asynchronous start, so
 * the bytes only need to exist by then.
 */
export class PendingBlob extends Blob {
  constructor(private readonly source: () => Promise<Blob>) {
    super([]);
  }

  override async arrayBuffer(): Promise<ArrayBuffer> {
    return (await this.source()).arrayBuffer();
  }
}

import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadVector } from "./extensions.js";
import { memoryTemplate } from "./template.js";
import { readCachedTemplate, templateCachePath } from "./template-cache.js";

/**
 * A new data directory needs initdb. Run inside the process, PGlite does it with two throwaway
 * WebAssembly instances (a helper database and initdb itself) whose memory the allocator never
 * returns: a first start held about 140 MB more than every later one. So initdb runs in a short
 * child process that hands back a dump of the new cluster, and the data directory is filled from
 * that dump, as a `memory://` database is filled from its template. When the project's cache
 * already holds that template (template-cache.ts), it is the new cluster and no initdb runs.
 */
export async function freshCluster(): Promise<Blob> {
  const cached = readCachedTemplate(templateCachePath((await loadVector()) ? "vector" : ""));
  if (cached) return cached;
  const dir = await mkdtemp(join(tmpdir(), "trellis-initdb-"));
  const file = join(dir, "cluster.tar");
  try {
    const pglite = createRequire(import.meta.url).resolve("@electric-sql/pglite");
    await new Promise<void>((resolve, reject) => {
      execFile(process.execPath, ["-e", CHILD, pglite, file], { env: { ...process.env, NODE_OPTIONS: "" } }, (error, _stdout, stderr) =>
        error ? reject(new Error(`initdb in a child process failed: ${stderr || error.message}`)) : resolve(),
      );
    });
    return new BufferBlob(await readFile(file));
  } catch {
    // No child process here (a sandbox, a bundler that moved PGlite): the in-process template.
    return memoryTemplate();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The dump as PGlite reads it (`arrayBuffer()`), without a second copy of its bytes. */
class BufferBlob extends Blob {
  readonly #bytes: Buffer;

  constructor(bytes: Buffer) {
    super([]);
    this.#bytes = bytes;
  }

  override async arrayBuffer(): Promise<ArrayBuffer> {
    const { buffer, byteOffset, byteLength } = this.#bytes;
    return byteOffset === 0 && byteLength === buffer.byteLength ? (buffer as ArrayBuffer) : (buffer.slice(byteOffset, byteOffset + byteLength) as ArrayBuffer);
  }
}

/** The child: a new cluster in memory, dumped uncompressed to the file it is given. */
const CHILD = `
const { PGlite } = require(process.argv[1]);
(async () => {
  const pg = await PGlite.create("memory://");
  const dump = await pg.dumpDataDir("none");
  require("node:fs").writeFileSync(process.argv[2], Buffer.from(await dump.arrayBuffer()));
  await pg.close();
})().catch((error) => { console.error(error); process.exit(1); });
`;

import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NodeFS } from "@electric-sql/pglite/nodefs";
import { extractTar } from "./extract-tar.js";
import { loadVector } from "./extensions.js";
import { memoryTemplate } from "./template.js";
import { keepCachedTemplate, templateCachePath } from "./template-cache.js";

/**
 * A new data directory needs initdb. Run inside the process, PGlite does it with two throwaway
 * WebAssembly instances (a helper database and initdb itself) whose memory the allocator never
 * returns: a first start held about 140 MB more than every later one. So initdb runs in a short
 * child process that writes a dump of the new cluster to a file; when the project's cache already
 * holds the `memory://` template (template-cache.ts), that file is the new cluster and no initdb runs.
 * The child makes that same template (the `vector` extension created when pgvector is installed)
 * and it is kept in the cache, so the project's next new data directory, and its tests' `memory://`
 * databases, start from it instead of running initdb again.
 *
 * The dump is unpacked onto disk, streaming, before PGlite mounts the directory, rather than given
 * to PGlite as `loadDataDir`: PGlite reads that whole (a 40 MB ArrayBuffer beside the Blob it came
 * from, then a copy of every file in it), and on the database thread, which allocates little once
 * started, no collection ever freed them: 77 MB stayed resident, and the files' copies left about
 * 50 MB of freed memory the allocator kept (docs/operations.md#memory).
 */
export class NewClusterFS extends NodeFS {
  override async init(...args: Parameters<NodeFS["init"]>): ReturnType<NodeFS["init"]> {
    await fillNewCluster(this.rootDir);
    return super.init(...args);
  }
}

async function fillNewCluster(dataDir: string): Promise<void> {
  const vector = Boolean(await loadVector());
  const cached = templateCachePath(vector ? "vector" : "");
  if (cached && existsSync(cached)) return extractTar(cached, dataDir);
  const dir = await mkdtemp(join(tmpdir(), "trellis-initdb-"));
  const file = join(dir, "cluster.tar");
  try {
    await initdbInChild(file, vector).then(
      () => keepCachedTemplate(cached, file),
      async () => {
        // No child process here (a sandbox, a bundler that moved PGlite): the in-process template.
        await writeFile(file, new Uint8Array(await (await memoryTemplate()).arrayBuffer()));
      },
    );
    await extractTar(file, dataDir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function initdbInChild(file: string, vector: boolean): Promise<void> {
  const require = createRequire(import.meta.url);
  const pglite = require.resolve("@electric-sql/pglite");
  const pgvector = vector ? [require.resolve("@electric-sql/pglite-pgvector")] : [];
  return new Promise<void>((resolve, reject) => {
    execFile(process.execPath, ["-e", CHILD, pglite, file, ...pgvector], { env: { ...process.env, NODE_OPTIONS: "" } }, (error, _stdout, stderr) =>
      error ? reject(new Error(`initdb in a child process failed: ${stderr || error.message}`)) : resolve(),
    );
  });
}

/**
 * The child: a new cluster in memory (with pgvector's extension when given it), dumped uncompressed
 * to the file it is given, as template.ts makes the template. Its WebAssembly runs on V8's quick
 * compiler alone: initdb runs once, and optimizing its hot functions cost more than it saved
 * (about 8 s of CPU instead of 5, and 110 MB more resident).
 */
const CHILD = `
require("node:v8").setFlagsFromString("--liftoff-only");
const { PGlite } = require(process.argv[1]);
const vector = process.argv[3] && require(process.argv[3]).vector;
(async () => {
  const pg = await PGlite.create("memory://", { extensions: vector ? { vector } : {} });
  if (vector) await pg.exec("create extension if not exists vector");
  const dump = await pg.dumpDataDir("none");
  require("node:fs").writeFileSync(process.argv[2], Buffer.from(await dump.arrayBuffer()));
  await pg.close();
})().catch((error) => { console.error(error); process.exit(1); });
`;

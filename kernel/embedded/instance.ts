import { existsSync } from "node:fs";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
// `live` is part of @electric-sql/pglite itself (a dependency), so it is always there.
import { live, type LiveNamespace } from "@electric-sql/pglite/live";
import { pgliteTypeOptions } from "../db/dialect/family.js";
import { lazyVector, loadVector } from "./extensions.js";
import { NewClusterFS } from "./fresh-cluster.js";
import { memoryTemplate, PendingBlob } from "./template.js";
import { compiledModule } from "./wasm-module.js";

/** The PGlite instance, with the `live` extension's namespace. */
export type EmbeddedClient = PGlite & { live: LiveNamespace };

export const MEMORY = "memory://";

/**
 * One PGlite instance as `embedded()` configures it, on whichever thread calls this: the
 * request thread (`thread: "main"`) or the database thread (worker/thread.ts). `started`
 * resolves once it runs and the `vector` extension exists; it is started at once, so
 * `create extension` is queued ahead of anything a caller sends.
 */
export function openInstance(dataDir: string, sharedBuffers: string, from?: Blob): { client: EmbeddedClient; started: Promise<void> } {
  const startLog = new StartLog();
  const client = new PGlite(dataDir, {
    ...pgliteTypeOptions,
    // The module compiled from bytes outside glibc's allocator (wasm-module.ts), before the extensions it loads.
    extensions: { wasmModule: compiledModule, vector: lazyVector, live },
    postgresqlconf: [`shared_buffers = ${sharedBuffers}`],
    // `from`: a dump to start from instead of the template (a migrated test database, copies.ts).
    loadDataDir: dataDir === MEMORY ? (from ?? new PendingBlob(memoryTemplate)) : undefined,
    // A new data directory is unpacked from a dump of a fresh cluster as PGlite mounts it (fresh-cluster.ts).
    fs: dataDir !== MEMORY && isNewCluster(dataDir) ? new NewClusterFS(dataDir) : undefined,
    onStderr: (line) => startLog.add(line),
  }) as EmbeddedClient;
  const started = (async () => {
    try {
      await client.waitReady;
    } catch (error) {
      throw startLog.explain(error);
    } finally {
      startLog.end();
    }
    // Iterative HNSW scans: a `nearest` search with a `where` (or k above hnsw.ef_search) still
    // finds k rows; the statement sorts them by distance again (kernel/db/nearest.ts).
    if (await loadVector()) await client.exec("create extension if not exists vector; set hnsw.iterative_scan = relaxed_order");
  })();
  started.catch(() => {}); // reported to whoever awaits it, not as an unhandled rejection
  return { client, started };
}

/** A directory PostgreSQL has not initialised yet (no `PG_VERSION`). */
function isNewCluster(dataDir: string): boolean {
  return !existsSync(join(dataDir, "PG_VERSION"));
}

/**
 * PostgreSQL's own messages while it starts: when it will not start, PGlite only throws "PGlite
 * failed to initialize properly", and PostgreSQL's reason (a FATAL or PANIC line, with its DETAIL
 * and HINT) goes to its standard error, which PGlite shows only with `debug`. The last few such
 * lines are kept until the instance runs, and added to that error; nothing is kept afterwards.
 */
class StartLog {
  #lines: string[] | undefined = [];

  /** Always false: PGlite prints the line itself only with `debug`, as it would have. */
  add(line: string): boolean {
    const message = /\b(PANIC|FATAL|ERROR|DETAIL|HINT):\s+(.*)$/.exec(line);
    if (this.#lines && message) {
      this.#lines.push(`${message[1]}: ${message[2]}`);
      if (this.#lines.length > 8) this.#lines.shift();
    }
    return false;
  }

  explain(error: unknown): unknown {
    if (!this.#lines?.length || !(error instanceof Error)) return error;
    return new Error(`${error.message} (PostgreSQL: ${this.#lines.join(" ")})`, { cause: error });
  }

  end(): void {
    this.#lines = undefined;
  }
}

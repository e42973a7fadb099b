import { accessSync, constants, existsSync, mkdirSync } from "node:fs";
import { TrellisError } from "../errors.js";
import { join, resolve } from "node:path";
import { PGlite } from "@electric-sql/pglite";
// `live` is part of @electric-sql/pglite itself (a dependency), so it is always there.
import { live, type LiveNamespace } from "@electric-sql/pglite/live";
import type { Dialect } from "kysely";
import { pgliteTypeOptions } from "../db/dialect/family.js";
import type { DatabaseAbout } from "../contracts/resources.js";
import { PGliteDialect } from "../db/dialect/pglite.js";
import { reentrant } from "../db/dialect/reentrant.js";
import { backupEmbedded } from "./backup.js";
import { lazyVector, loadVector } from "./extensions.js";
import { lockDataDir } from "./lock.js";
import { memoryTemplate, PendingBlob } from "./template.js";
import { freshCluster } from "./fresh-cluster.js";

export interface EmbeddedConfig {
  /**
   * Data directory, created if missing, and locked against a second process (a
   * `<dataDir>.lock` file beside it). `memory://` gives an in-memory database.
   * @default `<cwd>/.app/embedded`
   */
  dataDir?: string;
  /**
   * PostgreSQL's `shared_buffers` inside the embedded instance. PostgreSQL's own default (128MB)
   * lives in the WASM heap and is touched, so it is most of the process's memory; 16MB keeps a
   * reopened blog about 120 MB lighter (docs/operations.md#memory) at no measurable cost
   * for an embedded workload. Raise it for large working sets.
   * @default "16MB"
   */
  sharedBuffers?: string;
}

/** The PGlite instance, with the `live` extension's namespace. */
export type EmbeddedClient = PGlite & { live: LiveNamespace };

/** Live provider for the live-query plugin: the instance and its `live` namespace. */
export type EmbeddedLiveProvider = {
  readonly kind: "pglite";
  readonly client: EmbeddedClient;
};

export interface EmbeddedDatabase {
  /** Kysely dialect over the instance; reentrant, waits for `ready()` before the first query. */
  readonly dialect: Dialect;
  readonly kind: "postgres";
  readonly live: EmbeddedLiveProvider;
  /** The engine and the absolute data directory, for the start banner. */
  readonly about: DatabaseAbout;
  /** The PGlite instance. Queries on it wait for start-up, not for `ready()`. */
  readonly client: EmbeddedClient;
  /** Resolves once the instance is started and its extensions exist (`vector` created). */
  ready(): Promise<void>;
  /**
   * A consistent gzip tarball of the data directory, taken while the app serves, through the app's
   * own instance (`trellis db backup`; restore with `trellis db restore` or `restoreEmbedded`).
   */
  backup(): Promise<Uint8Array>;
  /**
   * Closes the instance and releases the data-directory lock. Idempotent; `App.close()`
   * calls it, and so does destroying a Kysely instance built on `dialect`.
   */
  close(): Promise<void>;
}

/** An embedded PostgreSQL (PGlite) with the `vector` and `live` extensions. */
export function embedded(config: EmbeddedConfig = {}): EmbeddedDatabase {
  const dataDir = resolveDataDir(config.dataDir);
  let releaseLock = () => {};
  if (dataDir !== MEMORY) {
    try {
      mkdirSync(dataDir, { recursive: true });
      accessSync(dataDir, constants.W_OK);
    } catch (cause) {
      const code = (cause as NodeJS.ErrnoException).code ?? "";
      throw new TrellisError(
        "EMBEDDED_DIR_UNWRITABLE",
        `embedded(): cannot write the data directory ${dataDir} (${code || String(cause)}). Give this process write access to it, or choose another dataDir.`,
        { cause },
      );
    }
    releaseLock = lockDataDir(dataDir).release;
  }
  let client: EmbeddedClient;
  try {
    client = new PGlite(dataDir, {
      ...pgliteTypeOptions,
      extensions: { vector: lazyVector, live },
      postgresqlconf: [`shared_buffers = ${sharedBuffers(config.sharedBuffers)}`],
      loadDataDir: dataDir === MEMORY ? new PendingBlob(memoryTemplate) : isNewCluster(dataDir) ? new PendingBlob(freshCluster) : undefined,
    }) as EmbeddedClient;
  } catch (error) {
    releaseLock();
    throw error;
  }

  // Started now, so `create extension` is queued ahead of anything a caller sends.
  const started = (async () => {
    await client.waitReady;
    if (await loadVector()) await client.exec("create extension if not exists vector");
  })();
  started.catch(() => {}); // reported to whoever awaits ready(), not as an unhandled rejection

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      try {
        await started.catch(() => {});
        if (!client.closed) await client.close();
      } finally {
        releaseLock();
      }
    })());

  const dialect = reentrant(
    new PGliteDialect({
      pglite: async () => {
        await started;
        return client;
      },
      onDestroy: close,
    }),
  );
  const about = { engine: "embedded PostgreSQL (PGlite)", location: dataDir === MEMORY ? "memory:// (gone at exit)" : dataDir };
  const backup = async () => {
    await started;
    return backupEmbedded(client);
  };
  return { dialect, kind: "postgres", live: { kind: "pglite", client }, client, about, ready: () => started, backup, close };
}

const MEMORY = "memory://";

/** A directory PostgreSQL has not initialised yet (no `PG_VERSION`). */
function isNewCluster(dataDir: string): boolean {
  return !existsSync(join(dataDir, "PG_VERSION"));
}

function sharedBuffers(value = "16MB"): string {
  if (!/^\d+\s*(kB|MB|GB)$/.test(value)) throw new Error(`embedded(): sharedBuffers must look like "16MB", "512kB" or "1GB", not "${value}"`);
  return value.replace(/\s+/g, "");
}

function resolveDataDir(dataDir: string | undefined): string {
  if (dataDir === undefined) return resolve(process.cwd(), ".app", "embedded");
  if (dataDir.startsWith(MEMORY)) return MEMORY;
  if (dataDir.startsWith("file://")) return resolve(dataDir.slice("file://".length));
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(dataDir)) {
    throw new Error(`embedded(): unsupported dataDir "${dataDir}"; use a directory path, file:// or memory://.`);
  }
  return resolve(dataDir);
}

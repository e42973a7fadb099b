import { accessSync, constants, mkdirSync } from "node:fs";
import { resolve } from "node:path";
import type { Dialect } from "kysely";
import { TrellisError } from "../errors.js";
import type { DatabaseAbout } from "../contracts/resources.js";
import { PGliteDialect, type PGliteLike } from "../db/dialect/pglite.js";
import { reentrant } from "../db/dialect/reentrant.js";
import { backupEmbedded } from "./backup.js";
import { embeddedHost } from "./host.js";
import { lockDataDir, removeServerLockFile } from "./lock.js";
import { stopSockets } from "./socket.js";
import { MEMORY, openInstance, type EmbeddedClient } from "./instance.js";
import { ThreadClient } from "./worker/client.js";
import { databaseThread, threadModule } from "./worker/host.js";

export type { EmbeddedClient } from "./instance.js";

/** Where SQL runs: on the thread that serves requests, or on a database thread beside it. */
export type EmbeddedThread = "main" | "worker";

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
  /**
   * `"worker"`: PGlite runs on a database thread (Node's `worker_threads`) and the dialect talks to
   * it over a message port, so the request thread parses, validates and encodes while SQL runs, and
   * a long query does not hold up other requests. `"main"`: PGlite runs on the request thread.
   * The environment variable `TRELLIS_EMBEDDED_THREAD` (`main` or `worker`) changes the default.
   * @default "worker" (docs/performance.md has the figures)
   */
  thread?: EmbeddedThread;
  /**
   * On the database thread (`thread: "worker"`), a statement (or a transaction's begin, commit or
   * rollback, or the close) that has not answered within this many milliseconds fails with
   * `EMBEDDED_STATEMENT_TIMEOUT` instead of holding the single connection, and every request after
   * it, for good. The statement itself may still finish on the thread. `0` waits forever. In-thread
   * (`thread: "main"`) a statement runs on the request thread itself, and nothing can time it out.
   * @default 60000
   */
  statementTimeoutMs?: number;
}

/**
 * The instance as the request thread reaches it: the PGlite instance itself in-thread, or a
 * client of the database thread (`query`, `exec`, `transaction`, `close`, `closed`, `waitReady`).
 */
export type EmbeddedQueryClient = PGliteLike;

/** Live provider for the live-query plugin: the instance (with its `live` namespace when in-thread). */
export type EmbeddedLiveProvider<Client extends EmbeddedQueryClient = EmbeddedQueryClient> = {
  readonly kind: "pglite";
  readonly client: Client;
};

export interface EmbeddedDatabase<Client extends EmbeddedQueryClient = EmbeddedQueryClient> {
  /** Kysely dialect over the instance; reentrant, waits for `ready()` before the first query. */
  readonly dialect: Dialect;
  readonly kind: "postgres";
  readonly live: EmbeddedLiveProvider<Client>;
  /** Where SQL runs (the `thread` option, or its default). */
  readonly thread: EmbeddedThread;
  /** The engine and the absolute data directory, for the start banner. */
  readonly about: DatabaseAbout;
  /** The absolute data directory; `undefined` for `memory://`. */
  readonly dataDir: string | undefined;
  /**
   * In-thread, the PGlite instance with its `live` namespace; on the database thread, a client
   * with its `query`, `exec`, `transaction` and `close`. Queries on it wait for start-up, not for `ready()`.
   */
  readonly client: Client;
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
  /**
   * On the database thread: up at once while a statement runs there (the thread is alive and
   * working; a second statement would only wait for it), else `select 1`. The health probe
   * uses it, so `/health` answers during a long query. In-thread, where nothing answers while a
   * statement runs: `select 1` sent to the instance itself.
   */
  readonly probe: () => Promise<void>;
}

/** An embedded PostgreSQL (PGlite) with the `vector` and `live` extensions. */
export function embedded(config: EmbeddedConfig & { thread: "main" }): EmbeddedDatabase<EmbeddedClient>;
export function embedded(config?: EmbeddedConfig): EmbeddedDatabase;
export function embedded(config: EmbeddedConfig = {}): EmbeddedDatabase<any> {
  const dataDir = resolveDataDir(config.dataDir);
  const buffers = sharedBuffers(config.sharedBuffers);
  const thread = threadOf(config.thread);
  const timeoutMs = statementTimeout(config.statementTimeoutMs);
  const open = () => openEmbedded(dataDir, buffers, thread, timeoutMs);
  // A process that outlives its apps (the dev supervisor, the CLI) may hand over a database (lend.ts).
  const host = dataDir === MEMORY ? undefined : embeddedHost();
  return host?.(dataDir, open) ?? open();
}

function openEmbedded(dataDir: string, buffers: string, thread: EmbeddedThread, timeoutMs: number): EmbeddedDatabase<any> {
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
    // A process killed as PostgreSQL started may have left its lock file empty: PostgreSQL would refuse the directory.
    removeServerLockFile(dataDir);
  }
  let client: PGliteLike;
  let started: Promise<void>;
  try {
    if (thread === "worker") {
      const host = databaseThread();
      client = new ThreadClient(host.thread, host.db, dataDir, buffers, timeoutMs);
      started = client.waitReady;
    } else {
      ({ client, started } = openInstance(dataDir, buffers));
    }
  } catch (error) {
    releaseLock();
    throw error;
  }

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      try {
        await started.catch(() => {});
        // In-thread, psql's socket servers (`trellis db shell`) end with the instance; on the thread, its close ends them.
        if (!(client instanceof ThreadClient)) await stopSockets(client as EmbeddedClient);
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
  const probe =
    client instanceof ThreadClient
      ? async () => {
          if (client.closed) throw new Error("PGlite is closed");
          if (!client.busy) await client.query("select 1");
        }
      : async () => {
          // In-thread, `select 1` straight to the instance: the dialect's layers would add nothing to the answer.
          await started;
          await client.exec("select 1");
        };
  const backup = async () => {
    await started;
    return client instanceof ThreadClient ? client.backup() : backupEmbedded(client as EmbeddedClient);
  };
  return { dialect, kind: "postgres", live: { kind: "pglite", client }, client, thread, about, dataDir: dataDir === MEMORY ? undefined : dataDir, ready: () => started, backup, close, probe };
}

function statementTimeout(ms: number | undefined): number {
  if (ms === undefined) return 60_000;
  if (!Number.isInteger(ms) || ms < 0) throw new Error(`embedded(): statementTimeoutMs must be a whole number of milliseconds, 0 or more, not ${String(ms)}`);
  return ms;
}

/**
 * The thread option, else `TRELLIS_EMBEDDED_THREAD`, else the database thread where its module
 * can be found (a bundle that left it out runs in-thread).
 */
function threadOf(option: EmbeddedThread | undefined): EmbeddedThread {
  const wanted = option ?? process.env.TRELLIS_EMBEDDED_THREAD;
  if (wanted !== undefined && wanted !== "main" && wanted !== "worker") {
    throw new Error(`embedded(): thread must be "main" or "worker", not "${wanted}"`);
  }
  if (wanted === "worker" && !threadModule()) {
    throw new TrellisError(
      "EMBEDDED_THREAD_MISSING",
      'embedded({ thread: "worker" }): the database thread\'s module (embedded-thread.js) is not beside the code that loads it (a bundle that left it out?). Ship it beside the bundle, or use thread: "main".',
    );
  }
  return wanted ?? (threadModule() ? DEFAULT_THREAD : "main");
}

/** The default where the database thread can run; docs/performance.md has the figures behind it. */
const DEFAULT_THREAD: EmbeddedThread = "worker";




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

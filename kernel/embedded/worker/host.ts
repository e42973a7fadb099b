import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { fromWire, type Reply, type Request } from "./protocol.js";

/**
 * The request thread's side of the database thread: one worker per process, started on the first
 * `embedded({ thread: "worker" })`, and a table of pending requests answered by id. The worker
 * keeps the process alive only while a request is pending, as an in-thread PGlite (which holds
 * no handle) does not keep it alive either.
 */

type Pending = { resolve(value: unknown): void; reject(error: Error): void };
type Payload = Request extends infer R ? (R extends Request ? Omit<R, "id"> : never) : never;

/** Where the thread's module is: beside this one as TypeScript (from source) or in the build. */
export function threadModule(): { url: URL; typescript: boolean } | undefined {
  const here = import.meta.url;
  if (here.endsWith(".ts")) return { url: new URL("./thread.ts", here), typescript: true };
  const built = new URL("./embedded-thread.js", here);
  return existsSync(fileURLToPath(built)) ? { url: built, typescript: false } : undefined;
}

/**
 * V8 grows the thread's young generation to 16 MB, all of it resident, for the short-lived objects of
 * a statement's rows; 8 MB holds them as well at half the memory (docs/operations.md#memory). The old
 * generation keeps V8's own limit: a large result must not cost the thread an out-of-memory.
 */
const resourceLimits = { maxYoungGenerationSizeMb: 8 };

class DatabaseThread {
  readonly #worker: Worker;
  readonly #pending = new Map<number, Pending>();
  #next = 0;
  #stopped: Error | undefined;

  constructor(module: { url: URL; typescript: boolean }) {
    this.#worker = module.typescript
      ? // From source (tests, benchmarks): the thread compiles its TypeScript with the same loader.
        new Worker(new URL("./from-source.mjs", import.meta.url), { workerData: { module: module.url.href }, name: "trellis-embedded", resourceLimits })
      : new Worker(module.url, { name: "trellis-embedded", resourceLimits });
    this.#worker.unref();
    this.#worker.on("message", (reply: Reply) => {
      const pending = this.#pending.get(reply.id);
      if (!pending) return;
      this.#pending.delete(reply.id);
      if (this.#pending.size === 0) this.#worker.unref();
      if ("error" in reply) pending.reject(fromWire(reply.error));
      else pending.resolve(reply.value);
    });
    const stop = (error: Error) => {
      // Worded as PGlite words a closed instance, so the app answers 503 (kernel/availability.ts).
      this.#stopped = new Error(`PGlite is closed: the embedded database thread stopped (${error.message})`, { cause: error });
      if (thread === this) thread = undefined;
      for (const pending of this.#pending.values()) pending.reject(this.#stopped);
      this.#pending.clear();
    };
    this.#worker.on("error", stop);
    this.#worker.on("exit", (code) => stop(new Error(`exit code ${code}`)));
  }

  /**
   * Sends one request. With `timeoutMs`, a request the thread has not answered by then is
   * rejected and forgotten (a late answer is dropped), so nothing waits on it forever.
   */
  call<T>(request: Payload, transfer?: ArrayBuffer[], timeoutMs = 0): Promise<T> {
    if (this.#stopped) return Promise.reject(this.#stopped);
    const id = ++this.#next;
    return new Promise<T>((resolve, reject) => {
      if (this.#pending.size === 0) this.#worker.ref();
      let timer: NodeJS.Timeout | undefined;
      const settle = <A>(then: (value: A) => void) => (value: A) => {
        clearTimeout(timer);
        then(value);
      };
      this.#pending.set(id, { resolve: settle(resolve as (value: unknown) => void), reject: settle(reject) });
      this.#worker.postMessage({ ...request, id }, transfer);
      if (timeoutMs > 0) {
        timer = setTimeout(() => {
          if (!this.#pending.delete(id)) return;
          if (this.#pending.size === 0) this.#worker.unref();
          reject(new StatementTimeout(request.op, timeoutMs));
        }, timeoutMs);
        timer.unref();
      }
    });
  }
}

/** A request the database thread did not answer in time: an error for its caller instead of a wait without end. */
export class StatementTimeout extends Error {
  readonly code = "EMBEDDED_STATEMENT_TIMEOUT";
  constructor(op: string, ms: number) {
    super(`The embedded database did not answer ${op === "query" || op === "exec" ? "a statement" : `"${op}"`} within ${ms} ms (embedded({ statementTimeoutMs })); it was given up`);
    this.name = "StatementTimeout";
  }
}

let thread: DatabaseThread | undefined;
let databases = 0;

/** The process's database thread, started on first use, and a fresh id for one database on it. */
export function databaseThread(): { thread: DatabaseThread; db: number } {
  const module = threadModule();
  if (!module) throw new Error("the embedded database thread's module (embedded-thread.js) is not beside this one");
  thread ??= new DatabaseThread(module);
  return { thread, db: ++databases };
}

export type { DatabaseThread };

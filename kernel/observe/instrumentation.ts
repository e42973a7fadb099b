import type { ErrorSource } from "../errors.js";

/** What a storage call does; `get` and `set` move bytes, `delete` does not. */
export type StorageOperation = "get" | "set" | "delete";

/**
 * One observer of the app's work: each member wraps one kind of operation and must call `run`
 * exactly once, returning (or rethrowing) what it gives. Work started inside `run` (a statement
 * inside a procedure) is observed inside it, so a tracer's spans nest.
 */
export interface Observer {
  /** A procedure called through the gate, from `/rpc`, `client()`, REST, MCP or `sealed.call`. */
  procedure?<T>(name: string, source: ErrorSource, run: () => Promise<T>): Promise<T>;
  /** One SQL statement on the app's database (its text, parameters left out). */
  statement?<T>(sql: string, run: () => Promise<T>): Promise<T>;
  /** How long a statement waited for the database connection (the embedded database has one). */
  connectionWait?(ms: number): void;
  /** One call to the app's storage; `bytes` is the size written by a `set`. */
  storage?<T>(operation: StorageOperation, run: () => Promise<T>, bytes?: number): Promise<T>;
}

/**
 * The app's observation points, empty until a plugin adds an observer (the telemetry plugin, an
 * in-house profiler). The kernel reads each slot on the hot path and skips it when unset, so an
 * app without observers pays one property read per operation.
 */
export class Instrumentation {
  procedure: Observer["procedure"] = undefined;
  statement: Observer["statement"] = undefined;
  connectionWait: Observer["connectionWait"] = undefined;
  storage: Observer["storage"] = undefined;

  /** Adds an observer; with several, the one added first is outermost. */
  add(observer: Observer): void {
    const outer = { procedure: this.procedure, statement: this.statement, storage: this.storage };
    if (observer.procedure) {
      const inner = observer.procedure.bind(observer);
      const before = outer.procedure;
      this.procedure = before ? (name, source, run) => before(name, source, () => inner(name, source, run)) : inner;
    }
    if (observer.statement) {
      const inner = observer.statement.bind(observer);
      const before = outer.statement;
      this.statement = before ? (sql, run) => before(sql, () => inner(sql, run)) : inner;
    }
    if (observer.storage) {
      const inner = observer.storage.bind(observer);
      const before = outer.storage;
      this.storage = before ? (operation, run, bytes) => before(operation, () => inner(operation, run, bytes), bytes) : inner;
    }
    if (observer.connectionWait) {
      const inner = observer.connectionWait.bind(observer);
      const before = this.connectionWait;
      this.connectionWait = before ? (ms) => (before(ms), inner(ms)) : inner;
    }
  }

  /** True once any observer was added. */
  get active(): boolean {
    return !!(this.procedure || this.statement || this.connectionWait || this.storage);
  }
}

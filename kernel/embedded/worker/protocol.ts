import { protocol } from "@electric-sql/pglite";
import { nestedDeeperThan } from "../../db/json-depth.js";

/**
 * The messages between the request thread and the database thread. Every request carries an
 * `id` answered exactly once; `db` names one embedded database (the thread can hold several),
 * `tx` one open transaction on it. The port delivers in order and the thread starts each
 * statement in arrival order, so statements run in the order they were sent. `dump` answers a
 * backup (kernel/embedded/backup.ts) taken between two statements, its bytes handed over, not copied;
 * `serve` starts a socket server for psql on the instance at `path` (kernel/embedded/socket.ts), `unserve` stops it.
 */
export type Request =
  | { id: number; op: "open"; db: number; dataDir: string; sharedBuffers: string }
  | { id: number; op: "query"; db: number; tx?: number; sql: string; params: unknown[] }
  | { id: number; op: "exec"; db: number; tx?: number; sql: string }
  | { id: number; op: "begin"; db: number; tx: number }
  | { id: number; op: "end"; db: number; tx: number; commit: boolean }
  | { id: number; op: "rollback"; db: number; tx: number }
  | { id: number; op: "dump"; db: number }
  | { id: number; op: "serve"; db: number; path: string }
  | { id: number; op: "unserve"; db: number; path: string }
  | { id: number; op: "close"; db: number };

export type Reply = { id: number; value?: unknown } | { id: number; error: WireError };

/** An error as it crosses the port: its own fields kept, so the database error mapping reads it as before. */
export interface WireError {
  name: string;
  message: string;
  stack?: string;
  database: boolean;
  fields: Record<string, unknown>;
}

export function toWire(error: unknown): WireError {
  if (!(error instanceof Error)) return { name: "Error", message: String(error), database: false, fields: {} };
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(error)) {
    // PGlite's DatabaseError: code, detail, table, column, constraint, ... and the query's text.
    if (value === undefined || typeof value === "function" || typeof value === "symbol") continue;
    if (typeof value === "object" && value !== null && !Array.isArray(value)) continue;
    fields[key] = value;
  }
  return { name: error.name, message: error.message, stack: error.stack, database: error instanceof protocol.messages.DatabaseError, fields };
}

export function fromWire(wire: WireError): Error {
  const error: Error =
    wire.database ? new protocol.messages.DatabaseError(wire.message, 0, wire.name as never) : new Error(wire.message);
  for (const [key, value] of Object.entries(wire.fields)) {
    try {
      (error as unknown as Record<string, unknown>)[key] = value;
    } catch {
      // a read-only field: the constructor set it already
    }
  }
  if (!wire.database) error.name = wire.name;
  // The database thread's stack says where PGlite failed; the caller's own frames follow.
  if (wire.stack) error.stack = `${wire.stack}\n    at (embedded database thread)\n${new Error().stack?.split("\n").slice(2).join("\n") ?? ""}`;
  return error;
}

/**
 * The buffers of byte values (bytea) in rows, handed over rather than copied. Only those that own
 * their whole ArrayBuffer: a view into a shared pool must not be detached.
 */
export function transferables(rows: readonly unknown[]): ArrayBuffer[] {
  let list: ArrayBuffer[] | undefined;
  for (const row of rows) {
    if (row === null || typeof row !== "object") continue;
    for (const key in row as Record<string, unknown>) {
      const value = (row as Record<string, unknown>)[key];
      if (value instanceof Uint8Array && value.byteOffset === 0 && value.byteLength === value.buffer.byteLength && value.byteLength >= 1024) {
        (list ??= []).push(value.buffer as ArrayBuffer);
      }
    }
  }
  return list ?? NONE;
}

const NONE: ArrayBuffer[] = [];

/**
 * Past this nesting a value may not survive the structured clone to the request thread: the port
 * drops such a message (a `messageerror` that names no request), and the statement would never
 * answer. Writes are held to 64 levels (db/json-depth.ts); this catches values stored otherwise.
 */
const HANDOVER_DEPTH = 1000;

/** An error naming the column when a row holds a value nested past `HANDOVER_DEPTH`, else undefined. */
export function tooDeepToHandOver(rows: readonly unknown[]): Error | undefined {
  for (const row of rows) {
    if (row === null || typeof row !== "object") continue;
    for (const key in row as Record<string, unknown>) {
      const value = (row as Record<string, unknown>)[key];
      if (typeof value === "object" && value !== null && nestedDeeperThan(value, HANDOVER_DEPTH)) {
        return new Error(`The embedded database cannot hand over the value of "${key}": it is nested more than ${HANDOVER_DEPTH} levels deep`);
      }
    }
  }
  return undefined;
}

import { parentPort } from "node:worker_threads";
import type { Results, Transaction } from "@electric-sql/pglite";
import { backupEmbedded } from "../backup.js";
import { openInstance, type EmbeddedClient } from "../instance.js";
import { serveSocket, stopSockets, type ServedSocket } from "../socket.js";
import { preparedStatementsOf } from "../../db/dialect/pglite-prepared.js";
import { tooDeepToHandOver, toWire, transferables, type Reply, type Request } from "./protocol.js";

/**
 * The database thread: every embedded database of the process opened with `thread: "worker"`
 * lives here, so SQL runs beside the request thread instead of on it. One thread serves them
 * all, so the `memory://` template is built once per process, as in-thread.
 */

interface OpenTransaction {
  tx?: Transaction;
  /** Lets the callback given to `pglite.transaction()` return (commit) or throw (roll back). */
  decide(commit: boolean): void;
  done: Promise<unknown>;
}

interface Database {
  client: EmbeddedClient;
  started: Promise<void>;
  prepared: ReturnType<typeof preparedStatementsOf>;
  transactions: Map<number, OpenTransaction>;
  /** Socket servers for psql, by path. */
  sockets: Map<string, ServedSocket>;
}

const port = parentPort!;
const databases = new Map<number, Database>();
const ROLLED_BACK = Symbol("rolled back");

function reply(id: number, value: unknown, transfer?: ArrayBuffer[]): void {
  port.postMessage({ id, value } satisfies Reply, transfer);
}

function fail(id: number, error: unknown): void {
  port.postMessage({ id, error: toWire(error) } satisfies Reply);
}

function database(db: number): Database {
  const found = databases.get(db);
  if (!found) throw new Error("PGlite is closed");
  return found;
}

function target(request: { db: number; tx?: number }): EmbeddedClient | Transaction {
  const found = database(request.db);
  if (request.tx === undefined) return found.client;
  const open = found.transactions.get(request.tx)?.tx;
  if (!open) throw new Error("The transaction is not open on the embedded database thread.");
  return open;
}

/** Only what the dialect reads, so no parser state or field list is cloned with every answer. */
function answer(result: Results<unknown>) {
  return { rows: result.rows, affectedRows: result.affectedRows, command: result.command, rowCount: result.rowCount };
}

function begin(request: Extract<Request, { op: "begin" }>): void {
  const found = database(request.db);
  let decide!: (commit: boolean) => void;
  const decision = new Promise<boolean>((resolve) => (decide = resolve));
  const open: OpenTransaction = { decide, done: Promise.resolve() };
  found.transactions.set(request.tx, open);
  open.done = found.client.transaction(async (tx) => {
    open.tx = tx;
    reply(request.id, null);
    if (!(await decision) && !tx.closed) throw ROLLED_BACK;
  });
  open.done.catch((error: unknown) => {
    // BEGIN itself failed: the callback never ran, so the caller is still waiting for it.
    if (!open.tx) {
      found.transactions.delete(request.tx);
      fail(request.id, error);
    }
  });
}

async function end(request: Extract<Request, { op: "end" }>): Promise<void> {
  const found = database(request.db);
  const open = found.transactions.get(request.tx);
  found.transactions.delete(request.tx);
  if (!open) return;
  open.decide(request.commit);
  try {
    await open.done;
  } catch (error) {
    if (error !== ROLLED_BACK) throw error;
  }
}

async function handle(request: Request): Promise<void> {
  switch (request.op) {
    case "open": {
      const opened = openInstance(request.dataDir, request.sharedBuffers);
      databases.set(request.db, { ...opened, prepared: preparedStatementsOf(opened.client), transactions: new Map(), sockets: new Map() });
      await opened.started;
      return reply(request.id, null);
    }
    case "query": {
      // Parameterised statements come from Kysely: each text is prepared once under a name.
      const found = database(request.db);
      const tx = request.tx === undefined ? undefined : (target(request) as Transaction);
      const result = request.params.length ? await found.prepared.query(request.sql, request.params, tx) : await (tx ?? found.client).query(request.sql);
      const refused = tooDeepToHandOver(result.rows);
      if (refused) return fail(request.id, refused);
      return reply(request.id, answer(result), transferables(result.rows));
    }
    case "exec": {
      const results = await target(request).exec(request.sql);
      const refused = results.map((result) => tooDeepToHandOver(result.rows)).find(Boolean);
      if (refused) return fail(request.id, refused);
      return reply(request.id, results.map(answer));
    }
    case "begin":
      return begin(request);
    case "end":
      await end(request);
      return reply(request.id, null);
    case "rollback": {
      await database(request.db).transactions.get(request.tx)?.tx?.rollback();
      return reply(request.id, null);
    }
    case "dump": {
      const bytes = await backupEmbedded(database(request.db).client);
      // The tarball owns its buffer: moved to the request thread, never copied.
      return reply(request.id, bytes, [bytes.buffer as ArrayBuffer]);
    }
    case "serve": {
      const found = database(request.db);
      await found.started;
      found.sockets.set(request.path, await serveSocket(found.client, request.path));
      return reply(request.id, null);
    }
    case "unserve": {
      const found = databases.get(request.db);
      await found?.sockets.get(request.path)?.stop();
      found?.sockets.delete(request.path);
      return reply(request.id, null);
    }
    case "close": {
      const found = databases.get(request.db);
      databases.delete(request.db);
      if (found) {
        await found.started.catch(() => {});
        await stopSockets(found.client);
        if (!found.client.closed) await found.client.close();
      }
      return reply(request.id, null);
    }
  }
}

port.on("message", (request: Request) => {
  // Started in arrival order; PGlite queues each statement behind the previous one.
  handle(request).catch((error: unknown) => fail(request.id, error));
});

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PGlite, Results } from "@electric-sql/pglite";
import { serveSocket, type ServedSocket } from "../../../kernel/embedded/socket.js";
import { ThreadClient } from "../../../kernel/embedded/worker/client.js";
import type { CommandResult, CommandTarget } from "../control/commands.js";
import { CliError, say, table } from "../output.js";
import { SOCKET_PORT } from "./db-shell.js";

/**
 * `trellis db shell` beside a running server, the server's side: `open` serves the embedded
 * database to psql on a Unix socket in a new folder only this user can enter (the socket server
 * runs where the PGlite instance lives: the database thread, or this thread), `close` stops it,
 * `query` runs statements for the CLI's own prompt (when psql is not installed) and prints the rows.
 */
export type ShellArgs = { op: "open" } | { op: "close"; dir: string } | { op: "query"; sql: string; empty?: string };


const sockets = new Map<string, ServedSocket>();

export async function shellOn(target: CommandTarget, args: ShellArgs): Promise<CommandResult> {
  const client = await embeddedClientOf(target);
  if (args.op === "open") return { code: 0, value: { dir: await openSocket(client) } };
  if (args.op === "close") {
    // Only a folder this server made: the request names one, it never picks what to remove.
    const socket = sockets.get(args.dir);
    sockets.delete(args.dir);
    if (socket) {
      await socket.stop();
      rmSync(args.dir, { recursive: true, force: true });
    }
    return 0;
  }
  return query(client, args.sql, args.empty);
}

async function openSocket(client: PGlite | ThreadClient): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "trellis-shell-"));
  const path = join(dir, `.s.PGSQL.${SOCKET_PORT}`);
  try {
    sockets.set(dir, client instanceof ThreadClient ? await client.serveSocket(path) : await serveSocket(client, path));
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  if (sockets.size === 1) process.once("exit", removeFolders);
  return dir;
}

/** A shell left open (its CLI killed) leaves no folder behind once the server ends. */
function removeFolders(): void {
  for (const dir of sockets.keys()) rmSync(dir, { recursive: true, force: true });
}

/**
 * The statements in a transaction of their own, as one: never left open between two calls, where
 * the app's statements would run inside it. Each result is printed as psql would, more or less.
 */
async function query(client: PGlite | ThreadClient, sql: string, empty: string | undefined): Promise<number> {
  let results: Results[];
  try {
    results = await client.transaction((tx) => tx.exec(sql));
  } catch (error) {
    const failure = error as Error & { code?: string; detail?: string; hint?: string };
    const state = failure.code && /^[0-9A-Z]{5}$/.test(failure.code) ? ` (SQLSTATE ${failure.code})` : "";
    const more = [failure.detail && `DETAIL:  ${failure.detail}`, failure.hint && `HINT:  ${failure.hint}`].filter(Boolean).join("\n");
    throw new CliError("CLI_SQL_ERROR", `ERROR:  ${failure.message}${state}${more ? `\n${more}` : ""}`);
  }
  for (const result of results) {
    const columns = result.fields?.length ? result.fields.map((field) => field.name) : Object.keys(result.rows[0] ?? {});
    if (columns.length === 0 && result.rows.length === 0) {
      if (empty === undefined) say(result.affectedRows ? `OK, ${result.affectedRows} ${result.affectedRows === 1 ? "row" : "rows"} affected` : "OK");
      continue;
    }
    if (result.rows.length === 0 && empty !== undefined) {
      say(empty);
      continue;
    }
    const rows = (result.rows as Record<string, unknown>[]).map((row) => columns.map((column) => cell(row[column])));
    say(table([columns, ...rows]));
    say(`(${rows.length} ${rows.length === 1 ? "row" : "rows"})`);
  }
  return 0;
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return `\\x${Buffer.from(value).toString("hex")}`;
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

async function embeddedClientOf(target: CommandTarget): Promise<PGlite | ThreadClient> {
  const db = target.options?.db as { live?: { kind?: string }; client?: unknown; ready?: () => Promise<void> } | undefined;
  if (db?.live?.kind !== "pglite" || !db.client || typeof db.ready !== "function") {
    throw new CliError("CLI_DB_SHELL_NOT_EMBEDDED", "The running server's database is not the embedded one.", "Set DATABASE_URL to the PostgreSQL database it uses; open a SQLite file with sqlite3.");
  }
  await db.ready();
  return db.client as PGlite | ThreadClient;
}

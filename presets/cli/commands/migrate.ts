import { CliError, green, say, table, yellow } from "../output.js";
import { onApp } from "../app-target.js";
import type { CommandTarget } from "../control/commands.js";

/** Exit codes a deploy script can branch on. */
export const MIGRATE_EXIT = { ok: 0, failed: 1, pending: 2, drift: 3 } as const;

interface Status {
  rows: { name: string; state: "applied" | "pending"; executedAt?: Date }[];
  /** The history check's refusal (drift, a missing or reordered version), if any. */
  problem?: Error & { code?: string };
}


async function statusOf(built: any): Promise<Status> {
  const migrations = (await built.migrator.getMigrations()) as { name: string; executedAt?: Date }[];
  const rows = migrations.map((m) => ({ name: m.name, state: m.executedAt ? ("applied" as const) : ("pending" as const), executedAt: m.executedAt }));
  // Loaded where the command runs: the CLI beside a running server only asks it.
  const { checkHistory } = await import("../../../kernel/db/history-check.js");
  try {
    await checkHistory(built.db, built.overview().database.kind, built.sealed.schemas);
    return { rows };
  } catch (error) {
    return { rows, problem: error as Status["problem"] };
  }
}

function print({ rows, problem }: Status): void {
  say(table([["migration", "state", "applied at"], ...rows.map((row) => [row.name, row.state === "applied" ? green("applied") : yellow("pending"), row.executedAt?.toISOString() ?? ""])]));
  if (rows.length === 0) say("no schema versions registered");
  if (problem) say(`\n${problem.code ?? "MIGRATION_CHECK_FAILED"}: ${problem.message}`);
}

/** `trellis migrate status`: what is applied and what is pending; exits 3 on drift. */
export function migrateStatus(): Promise<number> {
  return onApp("migrate status", {}, statusOn);
}

export async function statusOn({ built }: CommandTarget): Promise<number> {
  const status = await statusOf(built);
  print(status);
  return status.problem ? MIGRATE_EXIT.drift : MIGRATE_EXIT.ok;
}

/** `trellis migrate check`: 0 when the database is at the registered schema, 2 when versions are pending, 3 on drift. */
export function migrateCheck(): Promise<number> {
  return onApp("migrate check", {}, checkOn);
}

export async function checkOn({ built }: CommandTarget): Promise<number> {
  const status = await statusOf(built);
  print(status);
  if (status.problem) return MIGRATE_EXIT.drift;
  const pending = status.rows.filter((row) => row.state === "pending").length;
  say(pending ? `\n${pending} version(s) pending: run \`trellis migrate up\`` : "\nup to date");
  return pending ? MIGRATE_EXIT.pending : MIGRATE_EXIT.ok;
}

/** `trellis migrate up`: applies every pending version (under the migration lock). */
export function migrateUp(): Promise<number> {
  return onApp("migrate up", {}, upOn);
}

export async function upOn({ built }: CommandTarget): Promise<number> {
  const { error, results } = await built.migrator.migrateToLatest();
  // A run is one transaction: when a step fails, the steps before it in the run are rolled back too.
  const state = (status: string) => (status === "Success" ? (error ? yellow("rolled back") : green("applied")) : yellow(status === "Error" ? "failed" : "not run"));
  for (const result of results ?? []) say(`${state(result.status)}  ${result.migrationName}`);
  if (error) {
    const failure = error as Error & { code?: string };
    throw new CliError(failure.code ?? "MIGRATION_FAILED", failure.message, "The whole run was rolled back: the database is still at the version it had before. Fix the cause and run `trellis migrate up` again.");
  }
  if (!results?.length) say("up to date: nothing to apply");
  return MIGRATE_EXIT.ok;
}

import { sql, type Kysely } from "kysely";
import { TrellisError } from "../errors.js";
import type { SchemaModel } from "../schema/model.js";
import type { DatabaseKind } from "../contracts/resources.js";
import { migrationName } from "./migrations.js";
import { checksumOf, definitionOf, ensureVersionTable, readVersions, recordVersion, tableExists, type Definition } from "./version-record.js";

/**
 * Checks, before migrating, that the registered versions still describe what the database applied:
 *
 * - every applied step is registered at the same position (else `MIGRATION_VERSION_MISSING` for a
 *   version the app no longer registers, a gap, or `MIGRATION_VERSION_ORDER` for one registered at
 *   another position), where Kysely would only say "corrupted migrations";
 * - every applied version's definition is unchanged since it was applied (else `MIGRATION_DRIFT`,
 *   naming the tables and columns that differ). Versions applied before checksums were kept are
 *   recorded as they are registered now.
 */
export async function checkHistory(db: Kysely<any>, kind: DatabaseKind, models: readonly SchemaModel[], migrationTable = "kysely_migration"): Promise<void> {
  if (!(await tableExists(db, kind, migrationTable))) return;
  const { rows } = await sql<{ name: string }>`select name from ${sql.table(migrationTable)} order by name`.execute(db);
  const applied = rows.map((row) => row.name);
  const registered = models.map((model, index) => migrationName(index, model.version));
  const records = await readVersions(db, kind);
  const versionOf = (name: string) => records.get(name)?.version ?? name.replace(/^\d+_/, "");

  const order: string[] = [];
  const missing: string[] = [];
  applied.forEach((name, index) => {
    if (registered[index] === name) return;
    const elsewhere = registered.findIndex((candidate) => candidate.replace(/^\d+_/, "") === name.replace(/^\d+_/, ""));
    const version = JSON.stringify(versionOf(name));
    if (elsewhere >= 0) {
      order.push(`version ${version} was applied as step ${index + 1} (${name}) but is registered as step ${elsewhere + 1} (${registered[elsewhere]})`);
    } else {
      missing.push(`version ${version} was applied as step ${index + 1} (${name}) but the app does not register it${registered[index] ? ` (step ${index + 1} is ${JSON.stringify(models[index]!.version)} now)` : ""}`);
    }
  });
  if (missing.length > 0) {
    throw new TrellisError(
      "MIGRATION_VERSION_MISSING",
      `The database has schema versions this app does not register: ${missing.join("; ")}. ` +
        "Register every version ever applied, oldest first (.schema(v1).schema(v2)...), and add new versions after them; " +
        "if the database is newer than this code, deploy the newer code.",
    );
  }
  if (order.length > 0) {
    throw new TrellisError(
      "MIGRATION_VERSION_ORDER",
      `Schema versions are registered out of order: ${order.join("; ")}. ` +
        "Register versions in the order they were applied and add a new version last; never insert one before an applied version.",
    );
  }

  const drift: string[] = [];
  for (const [index, name] of applied.entries()) {
    const model = models[index]!;
    const now = definitionOf(model);
    const record = records.get(name);
    if (!record) continue;
    if (record.checksum === (await checksumOf(now))) continue;
    drift.push(`version ${JSON.stringify(model.version)} (${name}): ${describeDrift(record.definition, now).join("; ")}`);
  }
  if (drift.length > 0) {
    throw new TrellisError(
      "MIGRATION_DRIFT",
      `Applied schema versions were changed after they ran, so the database does not match them: ${drift.join(". ")}. ` +
        "An applied version must never change: restore its definition, and make the change in a new version (.schema(next)) that the next start migrates.",
    );
  }
  // Versions applied before checksums were kept: recorded once, as they are registered now.
  const unrecorded = applied.filter((name) => !records.has(name));
  if (unrecorded.length > 0) {
    await ensureVersionTable(db);
    for (const name of unrecorded) await recordVersion(db, name, models[applied.indexOf(name)]!);
  }
}

/** `table item: column note added; column name was "text not null", now "integer not null"`. */
export function describeDrift(before: Definition, after: Definition): string[] {
  const lines: string[] = [];
  for (const table of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const was = before[table];
    const now = after[table];
    if (!was) {
      lines.push(`table ${table} added`);
      continue;
    }
    if (!now) {
      lines.push(`table ${table} removed`);
      continue;
    }
    const columns: string[] = [];
    for (const column of new Set([...Object.keys(was), ...Object.keys(now)])) {
      if (was[column] === now[column]) continue;
      if (was[column] === undefined) columns.push(`column ${column} added`);
      else if (now[column] === undefined) columns.push(`column ${column} removed`);
      else columns.push(`column ${column} was "${was[column]}", now "${now[column]}"`);
    }
    if (columns.length > 0) lines.push(`table ${table}: ${columns.join(", ")}`);
  }
  return lines;
}

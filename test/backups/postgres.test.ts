// On PostgreSQL, `.backups()` runs pg_dump: a backup taken while writers insert rows, restored with
// pg_restore into an empty database, holds every row acknowledged before the backup began. The
// suite gets two databases of its own (source and restore target) on DATABASE_URL's server.
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresDialect } from "../../kernel/db/dialect/postgres.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import type { BackupsService } from "../../plugins/backups/index.js";
import { underWriteLoad } from "../support/write-load.js";

const url = process.env.DATABASE_URL;
const pgDump = spawnSync("pg_dump", ["--version"], { encoding: "utf8" });
const skip = !url ? "DATABASE_URL is not set" : pgDump.status !== 0 ? "pg_dump is not installed" : undefined;
if (skip) console.log(`skipping the PostgreSQL backup suite: ${skip}`);

const v1 = schema("1").table("note", (t) => ({ id: t.serial().primaryKey(), body: t.text() })).build();

function databaseUrl(name: string): string {
  const target = new URL(url!);
  target.pathname = `/${name}`;
  return target.toString();
}

async function onServer(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

describe.skipIf(skip !== undefined)("PostgreSQL backups through pg_dump", () => {
  const source = `trellis_backup_src_${process.pid}`;
  const target = `trellis_backup_dst_${process.pid}`;
  let app: any;

  beforeAll(async () => {
    for (const name of [source, target]) await onServer(`drop database if exists ${name}`).then(() => onServer(`create database ${name}`));
    app = await new App({ db: { dialect: postgresDialect({ connectionString: databaseUrl(source) }), kind: "postgres" } })
      .schema(v1)
      .resource("note")
      .backups({ url: databaseUrl(source), to: mkdtempSync(join(tmpdir(), "trellis-pg-backups-")) })
      .start();
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    for (const name of [source, target]) await onServer(`drop database if exists ${name} with (force)`);
  });

  it("taken under write load, restores every row acknowledged before it began", { timeout: 120_000 }, async () => {
    const backups = app.sealed.service("backups") as BackupsService;
    const load = await underWriteLoad(app, () => backups.take());
    const { name, size } = load.result;
    console.log(`pg_dump backup: ${(size / 1024).toFixed(0)} KB in ${load.tookMs} ms, ${load.before.length} rows acknowledged before it, ${load.during} during (${pgDump.stdout.trim()})`);
    expect(name).toMatch(/^backup-.*\.dump$/);

    const file = join(mkdtempSync(join(tmpdir(), "trellis-pg-restore-")), name);
    writeFileSync(file, (await backups.read(name))!);
    const restore = spawnSync("pg_restore", ["--exit-on-error", `--dbname=${databaseUrl(target)}`, file], { encoding: "utf8" });
    expect(restore.status, restore.stderr).toBe(0);

    const client = new pg.Client({ connectionString: databaseUrl(target) });
    await client.connect();
    try {
      const ids = new Set((await client.query<{ id: number }>("select id from note")).rows.map((row) => row.id));
      expect(load.before.filter((id) => !ids.has(id))).toEqual([]);
      expect(ids.size).toBeGreaterThanOrEqual(load.before.length);
    } finally {
      await client.end();
    }
  });
});

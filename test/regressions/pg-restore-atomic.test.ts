// `trellis db restore <file> --force` on PostgreSQL ran `pg_restore --clean --if-exists` statement by
// statement: a truncated or corrupt dump dropped and re-created the tables, then failed part way
// through their data, leaving the database half-restored (here every row of the second table
// gone) with exit code 1. The restore now runs as one transaction: it applies whole or not at all.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = resolve(import.meta.dirname, "../..");
const cli = [join(root, "node_modules/tsx/dist/cli.mjs"), join(root, "presets/cli/index.ts")];
const serverUrl = process.env.DATABASE_URL;

describe.skipIf(!serverUrl)("trellis db restore on PostgreSQL", () => {
  const name = `restore_${randomBytes(6).toString("hex")}`;
  let url: string;
  let dir: string;
  let pg: typeof import("pg").default;
  const query = async (text: string, target = url) => {
    const client = new pg.Client({ connectionString: target });
    await client.connect();
    try {
      return (await client.query(text)).rows;
    } finally {
      await client.end();
    }
  };
  const counts = async () => (await query("select (select count(*)::int from a) as a, (select count(*)::int from b) as b"))[0];
  const restore = (file: string) =>
    run(process.execPath, [...cli, "db", "restore", file, "--force"], { cwd: dir, env: { ...process.env, DATABASE_URL: url, NO_COLOR: "1" } }).then(
      () => 0,
      (error: { code?: number }) => error.code ?? 1,
    );

  beforeAll(async () => {
    pg = (await import("pg")).default;
    await query(`create database ${name}`, serverUrl);
    const at = new URL(serverUrl!);
    at.pathname = `/${name}`;
    url = at.toString();
    await query("create table a (id serial primary key, body text); create table b (id serial primary key, body text)");
    await query("insert into a (body) select md5(g::text) from generate_series(1, 20000) g; insert into b (body) select md5(g::text) from generate_series(1, 20000) g");
    dir = await mkdtemp(join(tmpdir(), "trellis-pg-restore-"));
    await writeFile(join(dir, "package.json"), JSON.stringify({ name: "restore-probe", private: true }));
    await run("pg_dump", ["--format=custom", `--file=${join(dir, "full.dump")}`, url]);
    const full = await readFile(join(dir, "full.dump"));
    await writeFile(join(dir, "cut.dump"), full.subarray(0, Math.floor((full.byteLength * 2) / 3)));
  }, 60_000);
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    if (pg) await query(`drop database if exists ${name} with (force)`, serverUrl);
  });

  it("fails on a truncated dump and leaves every table and row as it was", { timeout: 120_000 }, async () => {
    expect(await restore("cut.dump")).toBe(1);
    expect(await counts()).toEqual({ a: 20000, b: 20000 });
  });

  it("replaces the database from a whole dump", { timeout: 120_000 }, async () => {
    await query("delete from b where id > 100");
    expect(await restore("full.dump")).toBe(0);
    expect(await counts()).toEqual({ a: 20000, b: 20000 });
  });
});

// The backups plugin's parts without an app: retention by the time in a backup's name, names no
// caller can walk out of the backups with, two replicas writing the storage index at once, the
// password kept off pg_dump's command line, and a pg_dump stopped when the app closes.
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { pgClientEnv } from "../../kernel/index.js";
import { memoryStorage } from "../../kernel/storage/index.js";
import { Backups } from "../../plugins/backups/backups.js";
import { BACKUP_NAME, backupName, directoryPlace, storagePlace } from "../../plugins/backups/places.js";
import { pgDumpSource, type BackupSource } from "../../plugins/backups/source.js";

const bytes = new TextEncoder().encode("a backup's bytes");
const fakeSource: BackupSource = {
  extension: "tar.gz",
  describe: "test",
  take: async () => new ReadableStream({ start: (controller) => (controller.enqueue(bytes), controller.close()) }),
};

describe("backup names", () => {
  it("carry their UTC time and a random part; names of earlier versions still count", () => {
    const name = backupName(new Date("2026-11-25T03:00:00.123Z"), "dump");
    expect(name).toMatch(/^backup-2026-11-25T03-00-00-123Z-[0-9a-f]{8}\.dump$/);
    expect(BACKUP_NAME.test(name)).toBe(true);
    expect(backupName(new Date(), "dump")).not.toBe(backupName(new Date(), "dump"));
    expect(BACKUP_NAME.test("backup-2026-11-25T03-00-00-123Z.tar.gz")).toBe(true);
    for (const bad of ["../x", "backup-2026-11-25T03-00-00-123Z.tar.gz/../../x", "index.json", "backup-2026-11-25T03-00-00-123Z-zz.dump"]) expect(BACKUP_NAME.test(bad)).toBe(false);
  });
});

describe("a directory of backups", () => {
  it("keeps the newest by the time in their names, whatever their files' times", async () => {
    const dir = mkdtempSync(join(tmpdir(), "trellis-backups-keep-"));
    const oldest = "backup-2020-01-01T00-00-00-000Z.tar.gz";
    const older = "backup-2021-01-01T00-00-00-000Z-0123abcd.tar.gz";
    for (const name of [oldest, older]) writeFileSync(join(dir, name), "old");
    utimesSync(join(dir, oldest), new Date(), new Date(Date.now() + 60_000)); // touched since
    const backups = new Backups({ source: fakeSource, place: directoryPlace(dir), keep: 2, logger: undefined });
    const taken = await backups.take();
    expect(taken.size).toBe(bytes.byteLength);
    expect((await backups.list()).map((b) => b.name)).toEqual([taken.name, older]);
    expect(readdirSync(dir).sort()).toEqual([older, taken.name].sort());
    expect((await backups.list())[1]!.createdAt.toISOString()).toBe("2021-01-01T00:00:00.000Z");
  });

  it("reads and removes only backups: a name that walks out of the directory is none", async () => {
    const root = mkdtempSync(join(tmpdir(), "trellis-backups-names-"));
    const dir = join(root, "kept");
    writeFileSync(join(root, "secret"), "not a backup");
    const place = directoryPlace(dir);
    const backups = new Backups({ source: fakeSource, place, keep: 2, logger: undefined });
    const taken = await backups.take();
    expect(new TextDecoder().decode((await backups.read(taken.name))!)).toBe("a backup's bytes");
    expect(await backups.read("../secret")).toBeNull();
    expect(await backups.read(`../kept/${taken.name}`)).toBeNull();
    expect(await backups.read("backup-2020-01-01T00-00-00-000Z.tar.gz")).toBeNull();
    await expect(place.remove("../secret")).rejects.toThrow(/not a backup name/);
    expect(existsSync(join(root, "secret"))).toBe(true);
  });

  it("leaves no half-written file when the bytes fail midway", async () => {
    const dir = mkdtempSync(join(tmpdir(), "trellis-backups-partial-"));
    const broken = new ReadableStream<Uint8Array>({ start: (controller) => (controller.enqueue(bytes), controller.error(new Error("pg_dump died"))) });
    await expect(directoryPlace(dir).write(backupName(new Date(), "dump"), broken)).rejects.toThrow("pg_dump died");
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe("backups in the app's storage", () => {
  it("two replicas taking one at once are both listed", async () => {
    const storage = memoryStorage();
    const replicas = [0, 1].map(() => new Backups({ source: fakeSource, place: storagePlace(storage), keep: 7, logger: undefined }));
    const taken = await Promise.all(replicas.map((backups) => backups.take()));
    const listed = (await replicas[0]!.list()).map((b) => b.name).sort();
    expect(listed).toEqual(taken.map((b) => b.name).sort());
    expect(await replicas[1]!.read("../index.json")).toBeNull();
  });

  it("a prune removes only what it pruned", async () => {
    const storage = memoryStorage();
    const place = storagePlace(storage);
    const names = ["backup-2020-01-01T00-00-00-000Z-00000001.tar.gz", "backup-2021-01-01T00-00-00-000Z-00000002.tar.gz"];
    for (const name of names) await place.write(name, await fakeSource.take(new AbortController().signal));
    await Promise.all([place.remove(names[0]!), place.write("backup-2022-01-01T00-00-00-000Z-00000003.tar.gz", await fakeSource.take(new AbortController().signal))]);
    expect((await place.list()).map((b) => b.name)).toEqual(["backup-2022-01-01T00-00-00-000Z-00000003.tar.gz", names[1]]);
  });
});

describe("pg_dump", () => {
  const path = process.env.PATH;
  afterEach(() => void (process.env.PATH = path));

  /** A pg_dump on PATH that records its arguments, PGPASSWORD and pid, then runs `body`. */
  function fakePgDump(body: string): string {
    const dir = mkdtempSync(join(tmpdir(), "trellis-fake-pg-dump-"));
    writeFileSync(join(dir, "pg_dump"), `#!/bin/sh\necho "$@" > "${dir}/args"\necho "$PGPASSWORD" > "${dir}/password"\necho $$ > "${dir}/pid"\n${body}\n`);
    chmodSync(join(dir, "pg_dump"), 0o755);
    process.env.PATH = `${dir}:${path}`;
    return dir;
  }

  it("gets the password through PGPASSWORD, not its command line, and streams its output", async () => {
    const dir = fakePgDump("printf 'PGDMP dump bytes'");
    const stream = await pgDumpSource("postgres://app:s3cr%40t@127.0.0.1:5432/test").take(new AbortController().signal);
    expect(await new Response(stream).text()).toBe("PGDMP dump bytes");
    expect(readFileSync(join(dir, "args"), "utf8").trim()).toBe("--format=custom postgres://app@127.0.0.1:5432/test");
    expect(readFileSync(join(dir, "password"), "utf8").trim()).toBe("s3cr@t");
  });

  it("fails with its own words when it exits non-zero", async () => {
    fakePgDump("echo 'connection to postgres://app:pw@db failed' >&2; exit 1");
    const stream = await pgDumpSource("postgres://127.0.0.1/test").take(new AbortController().signal);
    await expect(new Response(stream).arrayBuffer()).rejects.toThrow("pg_dump failed: connection to postgres://***@db failed");
  });

  it("is killed when the app closes mid-backup", async () => {
    const dir = fakePgDump("printf 'PGDMP'; exec sleep 60");
    const backups = new Backups({ source: pgDumpSource("postgres://127.0.0.1/test"), place: directoryPlace(join(dir, "kept")), keep: 2, logger: undefined });
    const taking = backups.take();
    await vi.waitFor(() => expect(existsSync(join(dir, "pid")) && readFileSync(join(dir, "pid"), "utf8").trim(), "pg_dump's pid file").toBeTruthy(), { timeout: 15_000, interval: 20 });
    const pid = Number(readFileSync(join(dir, "pid"), "utf8"));
    backups.close();
    await expect(taking).rejects.toThrow("pg_dump was stopped: the app is closing");
    // Signalled at close; gone once the signal is handled (bounded: a pg_dump left running fails here).
    await vi.waitFor(() => expect(() => process.kill(pid, 0), `pg_dump (pid ${pid}) still running`).toThrow(), { timeout: 10_000, interval: 20 });
    expect(readdirSync(join(dir, "kept"))).toEqual([]);
  });
});

describe("pgClientEnv", () => {
  it("moves a URL's password into PGPASSWORD and leaves a URL without one as it is", () => {
    expect(pgClientEnv("postgres://u:p%3Aw@h:5432/d?sslmode=require", {})).toEqual({ url: "postgres://u@h:5432/d?sslmode=require", env: { PGPASSWORD: "p:w" } });
    expect(pgClientEnv("postgres://u@h/d", { A: "1" })).toEqual({ url: "postgres://u@h/d", env: { A: "1" } });
    expect(pgClientEnv("host=h dbname=d", {})).toEqual({ url: "host=h dbname=d", env: {} });
  });
});

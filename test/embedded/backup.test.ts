// A backup of the embedded database taken while the app serves writes restores to a database that
// holds every row acknowledged before the backup began; restore refuses a non-empty directory
// unless forced.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { embedded, restoreEmbedded } from "../../kernel/embedded/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App, type BuiltApp } from "../../presets/trellis.js";
import { underWriteLoad } from "../support/write-load.js";

const v1 = schema("1").table("note", (t) => ({ id: t.serial().primaryKey(), body: t.text() })).build();

describe.each(["main", "worker"] as const)("embedded backups, thread %s", (thread) => {
  const database = embedded({ dataDir: "memory://", thread });
  let app: BuiltApp<any, any>;
  let backup: Uint8Array;
  let beforeBackup: number[] = [];

  beforeAll(async () => {
    app = await new App({ db: database }).schema(v1).resource("note").start();
  }, 60_000);
  afterAll(() => app?.close());

  it("taken under write load, restores every row acknowledged before it began", { timeout: 120_000 }, async () => {
    const load = await underWriteLoad(app, () => database.backup());
    backup = load.result;
    beforeBackup = load.before;
    console.log(`backup (thread ${thread}): ${(backup.byteLength / 1024 / 1024).toFixed(1)} MB gzip in ${load.tookMs} ms, ${beforeBackup.length} rows acknowledged before it, ${load.during} during`);
    expect([backup[0], backup[1]]).toEqual([0x1f, 0x8b]); // gzip

    const dataDir = join(mkdtempSync(join(tmpdir(), "trellis-restore-")), "db");
    await restoreEmbedded(backup, dataDir);
    const restored = await new App({ db: embedded({ dataDir }) }).schema(v1).start();
    try {
      const ids = new Set((await restored.db.selectFrom("note").select("id").execute()).map((row: { id: number }) => row.id));
      expect(beforeBackup.filter((id) => !ids.has(id))).toEqual([]);
      const check = await sql<{ count: string }>`select count(*) from note`.execute(restored.db);
      expect(Number(check.rows[0]!.count)).toBeGreaterThanOrEqual(beforeBackup.length);
    } finally {
      await restored.close();
    }
  });

  // Skipped with `thread: "main"`: there the database runs on the event loop itself, so nothing can
  // answer while a statement (the backup) runs; only a database thread leaves the app free.
  it.runIf(thread === "worker")("on the database thread, the app answers while the backup runs", { timeout: 60_000 }, async () => {
    let done = false;
    const backup = database.backup().finally(() => (done = true));
    const health = await app.handle(new Request("http://localhost/health"));
    expect({ status: health.status, body: await health.json(), backupStillRunning: !done }).toEqual({ status: 200, body: { status: "ok", database: "up" }, backupStillRunning: true });
    expect((await backup).byteLength).toBeGreaterThan(1000);
  });

  it("refuses a non-empty directory unless forced", { timeout: 60_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "trellis-restore-full-"));
    writeFileSync(join(dataDir, "something"), "x");
    await expect(restoreEmbedded(backup, dataDir)).rejects.toMatchObject({ code: "DB_RESTORE_NOT_EMPTY", message: expect.stringContaining("--force") });
    await restoreEmbedded(backup, dataDir, { force: true });
    const restored = await new App({ db: embedded({ dataDir }) }).schema(v1).start();
    try {
      expect((await restored.db.selectFrom("note").select("id").execute()).length).toBeGreaterThanOrEqual(beforeBackup.length);
    } finally {
      await restored.close();
    }
  });
});

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

const v1 = schema("1").table("note", (t) => ({ id: t.serial().primaryKey(), body: t.text() })).build();

describe.each(["main", "worker"] as const)("embedded backups, thread %s", (thread) => {
  const database = embedded({ dataDir: "memory://", thread });
  let app: BuiltApp<any, any>;
  let backup: Uint8Array;
  const acknowledged: number[] = [];
  let beforeBackup: number[] = [];

  beforeAll(async () => {
    app = await new App({ db: database }).schema(v1).resource("note").start();
  });
  afterAll(() => app?.close());

  it("taken under write load, restores every row acknowledged before it began", async () => {
    let running = true;
    const writer = async () => {
      while (running) {
        const response = await app.handle(new Request("http://localhost/rpc/note/create", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ json: { body: "x".repeat(200) } }) }));
        const body = await response.json();
        if (response.status !== 200) throw new Error(`create answered ${response.status}: ${JSON.stringify(body)}`);
        acknowledged.push(body.json.id);
        // In-memory queries can settle without a macrotask: yield, or the timers below never run.
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    const writers = [writer(), writer(), writer()];
    const failed = Promise.all(writers).then(() => "stopped", (error) => error);
    while (acknowledged.length < 100) {
      const outcome = await Promise.race([failed, new Promise((resolve) => setTimeout(resolve, 10))]);
      if (outcome) throw outcome;
    }
    beforeBackup = [...acknowledged];
    const started = Date.now();
    backup = await database.backup();
    const tookMs = Date.now() - started;
    const duringBackup = acknowledged.length - beforeBackup.length;
    running = false;
    await Promise.all(writers);
    console.log(`backup (thread ${thread}): ${(backup.byteLength / 1024 / 1024).toFixed(1)} MB gzip in ${tookMs} ms, ${beforeBackup.length} rows acknowledged before it, ${duringBackup} during`);
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

  it("refuses a non-empty directory unless forced", async () => {
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

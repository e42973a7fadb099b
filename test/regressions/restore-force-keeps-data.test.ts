// `restoreEmbedded(bytes, dataDir, { force: true })` (and `trellis db restore --force`) deleted the
// data directory before reading the backup: a truncated or corrupt backup file then failed the
// restore with the app's database already gone (an empty or half-written directory in its place).
// The backup is now restored beside the directory and swapped in only once it opens.
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { embedded, restoreEmbedded } from "../../kernel/embedded/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";

const v1 = schema("1").table("note", (t) => ({ id: t.serial().primaryKey(), body: t.text() })).build();

async function bodies(dataDir: string): Promise<string[]> {
  const app = await new App({ db: embedded({ dataDir }) }).schema(v1).start();
  try {
    return (await app.db.selectFrom("note").select("body").orderBy("id").execute()).map((row: { body: string }) => row.body);
  } finally {
    await app.close();
  }
}

describe("a forced restore of a bad backup", () => {
  const root = mkdtempSync(join(tmpdir(), "trellis-restore-force-"));
  const dataDir = join(root, "db");
  let backup: Uint8Array;

  it("leaves the directory's database as it was", { timeout: 120_000 }, async () => {
    const database = embedded({ dataDir });
    const app = await new App({ db: database }).schema(v1).resource("note").start();
    await app.db.insertInto("note").values({ body: "kept" }).execute();
    backup = await database.backup();
    await app.close();

    const truncated = backup.subarray(0, Math.floor(backup.byteLength / 2));
    await expect(restoreEmbedded(truncated, dataDir, { force: true })).rejects.toMatchObject({ code: "DB_RESTORE_UNREADABLE" });
    await expect(restoreEmbedded(new TextEncoder().encode("not a backup"), dataDir, { force: true })).rejects.toMatchObject({ code: "DB_RESTORE_UNREADABLE" });
    expect(await bodies(dataDir)).toEqual(["kept"]);
    // Bytes that are neither gzip nor tar (and a gzip holding no tar): PGlite, given such a tarball,
    // retried it as gzip through a stream whose failure nothing awaited, so the refused restore left
    // an unhandled rejection behind (`incorrect header check`), which ended `trellis db restore`.
    const stray: unknown[] = [];
    const listener = (reason: unknown) => void stray.push(reason);
    process.on("unhandledRejection", listener);
    try {
      for (const bytes of [randomBytes(4096), new Uint8Array(4096), gzipSync(randomBytes(8192))]) {
        await expect(restoreEmbedded(bytes, dataDir, { force: true })).rejects.toMatchObject({ code: "DB_RESTORE_UNREADABLE", message: expect.stringContaining("not a tar archive") });
      }
      // Node reports an unhandled rejection once the microtask queue drains: one turn of the loop.
      await new Promise((turn) => setImmediate(turn));
    } finally {
      process.off("unhandledRejection", listener);
    }
    expect(stray).toEqual([]);
    expect(await bodies(dataDir)).toEqual(["kept"]);
    // Nothing left beside it but the directory itself.
    expect(readdirSync(dirname(dataDir)).sort()).toEqual(["db"]);
  });

  it("still replaces the directory with a good backup", { timeout: 120_000 }, async () => {
    const other = embedded({ dataDir });
    const app = await new App({ db: other }).schema(v1).resource("note").start();
    await app.db.insertInto("note").values({ body: "after the backup" }).execute();
    await app.close();
    await restoreEmbedded(backup, dataDir, { force: true });
    expect(await bodies(dataDir)).toEqual(["kept"]);
    expect(readdirSync(dirname(dataDir)).sort()).toEqual(["db"]);
  });
});

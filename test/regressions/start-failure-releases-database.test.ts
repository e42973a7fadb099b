import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { embedded } from "../../kernel/embedded/index.js";
import { schema } from "../../kernel/schema/index.js";
import type { AppPlugin } from "../../kernel/index.js";
import { App } from "../../presets/trellis.js";
import { rpc } from "../support/app.js";

/**
 * `start()` that fails while the app gets ready (a plugin's setup: a mail transport, a job queue
 * that cannot start) released nothing: only a failed migration closed the app. The embedded
 * database kept its thread and its data directory's lock, so the corrected app could not open the
 * same directory in the same process, and a command that only reports the failure was kept alive.
 */
const dir = mkdtempSync(join(tmpdir(), "trellis-failed-start-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const v1 = schema("1").table("note", (t) => ({ id: t.serial().primaryKey(), text: t.text() })).build();

const failingSetup: AppPlugin = {
  name: "failing-setup",
  build(ctx) {
    ctx.hooks.ready.tap(async () => {
      throw new Error("the transport could not be opened");
    });
  },
};

describe("a start() whose setup fails", () => {
  it("rejects with the setup's error and releases the embedded database's lock", async () => {
    const dataDir = join(dir, "data");
    const broken = new App({ db: embedded({ dataDir }), onError: () => {} }).schema(v1).use(failingSetup);
    await expect(broken.start()).rejects.toThrow("the transport could not be opened");
    // Released as the database closes, which flushes to disk: seconds on a loaded machine.
    for (let i = 0; i < 600 && existsSync(`${dataDir}.lock`); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(existsSync(`${dataDir}.lock`)).toBe(false);

    const fixed = await new App({ db: embedded({ dataDir }) }).schema(v1).resource("note", { permissions: { list: "public", create: "public" } }).start();
    expect((await rpc(fixed, "note.create", { text: "after a failed start" })).status).toBe(200);
    expect((await rpc(fixed, "note.list", {})).body).toMatchObject([{ id: 1, text: "after a failed start" }]);
    await fixed.close();
  }, 120_000); // two embedded starts on a data directory and a close between them
});

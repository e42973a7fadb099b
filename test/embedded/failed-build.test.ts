import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { embedded } from "../../kernel/embedded/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { rpc } from "../support/app.js";

/**
 * A build that fails (here: a rule that needs sessions, and no `.auth()`) releases the database it
 * opened: the data directory's lock is let go, so the corrected app starts on it in the same
 * process, and a command that only reports the failure (`trellis doctor`) is not kept alive by
 * the database thread.
 */
const dir = mkdtempSync(join(tmpdir(), "trellis-failed-build-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const v1 = schema("1").table("note", (t) => ({ id: t.serial().primaryKey(), text: t.text() })).build();

describe("a build that fails", () => {
  it("releases the embedded database's lock, and the corrected app opens the same directory", async () => {
    const dataDir = join(dir, "data");
    const broken = new App({ db: embedded({ dataDir }) }).schema(v1).resource("note", { permissions: { list: "authenticated" } });
    expect(() => broken.build()).toThrow(expect.objectContaining({ code: "KERNEL_AUTH_REQUIRED" }));
    // The database may still be starting when the build fails: closing waits for it (up to 40 s on a loaded machine).
    for (let i = 0; i < 800 && existsSync(`${dataDir}.lock`); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(existsSync(`${dataDir}.lock`)).toBe(false);

    const fixed = await new App({ db: embedded({ dataDir }) }).schema(v1).resource("note", { permissions: { list: "public", create: "public" } }).start();
    expect((await rpc(fixed, "note.create", { text: "after a failed build" })).status).toBe(200);
    expect((await rpc(fixed, "note.list", {})).body).toMatchObject([{ text: "after a failed build" }]);
    await fixed.close();
  }, 120_000); // up to 40 s for the lock, then an embedded start
});

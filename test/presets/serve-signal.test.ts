import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { embedded } from "../../kernel/embedded/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { rpc } from "../support/app.js";
import { exitOf, killAfterEach, waitForOutput } from "../support/children.js";

const track = killAfterEach();
const dir = mkdtempSync(join(tmpdir(), "trellis-signal-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("serve() on SIGTERM", () => {
  it("closes the embedded database: the lock is released and written data survives", async () => {
    const dataDir = join(dir, "data");
    const child = track(
      spawn(process.execPath, ["--import", "tsx", fileURLToPath(new URL("./serve-child.fixture.ts", import.meta.url)), dataDir], {
        stdio: ["ignore", "pipe", "inherit"],
      }),
    );
    const [, url] = await waitForOutput(child, /READY (\S+)/, 90_000, "the server starting");
    const created = await fetch(`${url}/rpc/note/create`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ json: { text: "before the signal" } }),
    });
    expect(created.status).toBe(200);
    expect(existsSync(`${dataDir}.lock`)).toBe(true);

    child.kill("SIGTERM");
    expect((await exitOf(child, 30_000, "the server closing on SIGTERM")).signal).toBe("SIGTERM");
    expect(existsSync(`${dataDir}.lock`)).toBe(false);

    const v1 = schema("1").table("note", (t) => ({ id: t.serial().primaryKey(), text: t.text() })).build();
    const reopened = await new App({ db: embedded({ dataDir }) }).schema(v1).resource("note").start();
    expect((await rpc(reopened, "note.list", {})).body).toMatchObject([{ text: "before the signal" }]);
    await reopened.close();
  }, 180_000); // a cold embedded start in the child, then one here: slow on a loaded machine
});

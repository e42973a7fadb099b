import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { embedded } from "../../kernel/embedded/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { serve } from "../../presets/node.js";
import { rpc, sqliteMemory } from "../support/app.js";
import { exitOf, waitForOutput } from "../support/children.js";
import { fixtureArgs } from "../support/fixture-child.js";

/**
 * `serve()` listens for SIGINT and SIGTERM to close its app; `close()` left those listeners in place.
 * Each server closed in a process kept one, and on the next signal it re-raised the signal as soon
 * as its own (long finished) close resolved; with two servers running, the first to finish closing
 * did the same. The process died before a server still closing had closed its database (its lock
 * left behind, its last writes not flushed).
 */
const dir = mkdtempSync(join(tmpdir(), "trellis-serve-signals-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const v1 = schema("1").table("note", (t) => ({ id: t.serial().primaryKey(), text: t.text() })).build();

describe("serve().close() and signals", () => {
  it("removes its signal listeners", async () => {
    const before = [process.listenerCount("SIGINT"), process.listenerCount("SIGTERM")];
    const server = await serve(new App({ db: sqliteMemory() }).schema(v1), { port: 0, hostname: "127.0.0.1", banner: false });
    expect([process.listenerCount("SIGINT"), process.listenerCount("SIGTERM")]).toEqual(before.map((count) => count + 1));
    await server.close();
    expect([process.listenerCount("SIGINT"), process.listenerCount("SIGTERM")]).toEqual(before);
  });

  // The two cases are processes and data directories of their own: they run at the same time. A
  // cold embedded start in the child, then one here: slow on a loaded machine.
  it.concurrent.for(["closed", "running"])("a signal closes every server before the process ends (the other server %s)", { timeout: 180_000 }, async (first, { expect, onTestFinished }) => {
    const dataDir = join(dir, first);
    const child = spawn(process.execPath, [...fixtureArgs(fileURLToPath(new URL("./serve-two.fixture.mjs", import.meta.url))), dataDir, first], { stdio: ["ignore", "pipe", "inherit"] });
    // A test that fails part-way leaves no child running (its own only: the other case's runs on).
    onTestFinished(() => void (child.exitCode === null && child.signalCode === null && child.kill("SIGKILL")));
    const [, url] = await waitForOutput(child, /READY (\S+)/, 90_000, "the two servers starting");
    const created = await fetch(`${url}/rpc/note/create`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ json: { text: "kept" } }) });
    expect(created.status).toBe(200);
    child.kill("SIGTERM");
    expect((await exitOf(child, 30_000, "the servers closing on SIGTERM")).signal).toBe("SIGTERM");
    expect(existsSync(`${dataDir}.lock`)).toBe(false);
    const reopened = await new App({ db: embedded({ dataDir }) }).schema(v1).resource("note").start();
    expect((await rpc(reopened, "note.list", {})).body).toEqual([{ id: 1, text: "kept" }]);
    await reopened.close();
  });
});

// The embedded database's disk full, on a small tmpfs: writes answer 507 with a message that says
// what to do, reads keep working, and once space returns the database writes again with every row
// it acknowledged intact (nothing corrupted). Skipped, with the reason, where mount is not permitted.
import { execSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { PGlite } from "@electric-sql/pglite";
import { embedded } from "../../kernel/embedded/index.js";
import { memoryTemplate } from "../../kernel/embedded/template.js";
import { App } from "../../presets/trellis.js";
import { serve, type RunningServer } from "../../presets/node.js";

const volume = mkdtempSync("/tmp/trellis-disk-full-");
let mountProblem: string | undefined;
try {
  execSync(`mount -t tmpfs -o size=64m tmpfs ${volume}`, { stdio: "pipe" });
} catch (error) {
  mountProblem = `mount -t tmpfs is not permitted here (${String((error as { stderr?: Buffer }).stderr ?? error).trim()})`;
  rmSync(volume, { recursive: true, force: true });
  console.log(`skipping the disk-full case: ${mountProblem}`);
}

const v1 = schema("1").table("note", (t) => ({ id: t.serial().primaryKey(), body: t.text() })).build();

describe.skipIf(Boolean(mountProblem))("the embedded database's disk full", () => {
  let server: RunningServer;
  const filler = join(volume, "filler");
  const errors: unknown[] = [];

  beforeAll(async () => {
    // The data directory is laid down from the cached template (a first start would run initdb in
    // a child process: tens of seconds on a busy machine), then opened by the app as an existing one.
    const seed = new PGlite(join(volume, "db"), { loadDataDir: await memoryTemplate() });
    await seed.close();
    server = await serve(new App({ db: embedded({ dataDir: join(volume, "db") }), onError: (error) => errors.push(error) }).schema(v1).resource("note"), {
      port: 0,
      hostname: "127.0.0.1",
      handleSignals: false,
      banner: false,
    });
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    execSync(`umount -l ${volume}`);
    rmSync(volume, { recursive: true, force: true });
  });

  const create = async (body: string) => {
    const response = await fetch(`${server.url}/rpc/note/create`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ json: { body } }) });
    return { status: response.status, body: (await response.json()).json };
  };
  const list = async () => {
    const response = await fetch(`${server.url}/rpc/note/list`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ json: { take: 100, orderBy: [{ id: "asc" }] } }) });
    return { status: response.status, rows: (await response.json()).json as { id: number; body: string }[] };
  };

  it("writes answer 507 saying so, reads keep working, and nothing is lost once space returns", async () => {
    const acknowledged = [];
    for (let i = 0; i < 3; i++) acknowledged.push((await create(`before ${i}`)).body.id);
    // Fill what is left of the volume.
    const fd = openSync(filler, "w");
    for (const size of [1 << 20, 4096]) {
      try {
        for (;;) writeSync(fd, Buffer.alloc(size));
      } catch {
        // ENOSPC: full at this granularity
      }
    }
    closeSync(fd);
    const big = "x".repeat(200_000);
    let refused: { status: number; body: any } | undefined;
    for (let i = 0; i < 20 && !refused; i++) {
      const answer = await create(`${big}${i}`);
      if (answer.status === 200) acknowledged.push(answer.body.id);
      else refused = answer;
    }
    const read = await list();
    const health = await fetch(`${server.url}/health`);
    console.log(`disk full: write ${refused?.status} "${refused?.body.message}", read ${read.status} (${read.rows.length} rows), /health ${health.status}`);
    expect(refused).toMatchObject({ status: 507, body: { code: "INSUFFICIENT_STORAGE", message: expect.stringContaining("disk is full") } });
    expect(read.status).toBe(200);
    expect(read.rows.map((row) => row.id)).toEqual(acknowledged);
    expect(errors.length).toBeGreaterThan(0); // the operator hears of it

    rmSync(filler);
    const after = await create("after space returned");
    expect(after.status).toBe(200);
    const final = await list();
    expect(final.rows.map((row) => row.id)).toEqual([...acknowledged, after.body.id]);
    const check = await fetch(`${server.url}/health`);
    expect(check.status).toBe(200);
  }, 90_000); // its named waits (10-30 s each) fail first; a loaded machine needs more than the default 30 s
});

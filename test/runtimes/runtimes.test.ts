import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";
import { serve as serveBun } from "trellis/bun";
import { createClient } from "trellis/client";
import { serve as serveDeno } from "trellis/deno";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cookieOf } from "../support/auth.js";
import { freePort } from "../support/browser.js";
import { freshBuild } from "../support/built-package.js";
import { openSocket } from "../support/channel-socket.js";
import { exitOf, killAfterEach, outputOf, waitForOutput } from "../support/children.js";
import { buildBlog } from "../support/npm-start.js";

/**
 * The blog's build (`.app/blog/server.js`, as `npm start` builds it) served by Bun (`trellis/bun`)
 * and by Deno (`trellis/deno`), each installed from the registry as a dev dependency: a user signs
 * up, creates and lists posts, follows a live list through a change, uploads an image and downloads
 * it, and two channel sockets join a post's room, one sending and the other receiving; SIGTERM
 * closes the app. What the runtime cannot run is refused before the app starts (the built package,
 * test/runtimes/smoke-app.mjs). One blog per runtime and database.
 */
const root = resolve(import.meta.dirname, "../..");
const BLOG = join(root, ".app/blog/server.js");
const SMOKE_APP = join(root, "test/runtimes/smoke-app.mjs");
// Deno with a node_modules folder, as npm installs it; no deno.lock written into the repository.
const DENO_RUN = ["run", "-A", "--node-modules-dir=manual", "--no-lock"];
const RUNTIMES = {
  bun: { bin: join(root, "node_modules/.bin/bun"), blog: [BLOG], smoke: [SMOKE_APP, "bun"] },
  deno: { bin: join(root, "node_modules/.bin/deno"), blog: [...DENO_RUN, BLOG], smoke: [...DENO_RUN, SMOKE_APP, "deno"] },
} as const;

/** Why the runtime's binary cannot run here, or undefined when it runs. */
function cannotRun(bin: string): string | undefined {
  const probe = spawnSync(bin, ["--version"], { encoding: "utf8", timeout: 30_000 });
  if (probe.error) return probe.error.message;
  return probe.status === 0 ? undefined : `${bin} --version exited with ${probe.status}: ${probe.stderr}`;
}

// CI's `npm install` has just built dist/; a stale build there is a failure, never a skip.
const built = freshBuild();
if (!built && process.env.CI) throw new Error("the Bun and Deno suites serve the built package: dist/ is missing or older than the sources (npm run build)");
if (!built) console.log("skipping the Bun and Deno suites: they serve the built package and dist/ is missing or older than the sources (npm run build)");
// The child inherits no test-runner variables: it is a production start, banner and signals included.
const { VITEST: _v, VITEST_WORKER_ID: _w, VITEST_POOL_ID: _p, NODE_ENV: _n, DATABASE_URL: _d, ...childEnv } = process.env;

interface Served {
  url: string;
  child: ChildProcess;
  output: { text: string };
  dataDir?: string;
}

/** The blog on `runtime`, with `env` (DATA_DIR or DATABASE_URL), once it prints its banner. */
async function start(runtime: keyof typeof RUNTIMES, env: Record<string, string>): Promise<Served> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const { bin, blog } = RUNTIMES[runtime];
  const child = spawn(bin, blog, {
    cwd: root,
    env: { ...childEnv, AUTH_SECRET: randomBytes(24).toString("base64"), ...env, HOST: "127.0.0.1", PORT: String(port), APP_BASE_URL: url },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output = outputOf(child);
  // The banner, as one log line when the output is not a terminal.
  await waitForOutput(child, /Trellis Blog is listening on http:\/\/127\.0\.0\.1:\d+/, 90_000, `the blog on ${runtime}`);
  return { url, child, output, dataDir: env.DATA_DIR };
}

/** The scenario, through HTTP, the typed client and channel sockets, as a user's front end runs it. */
async function scenario(served: Served): Promise<void> {
  const { url } = served;
  const signUp = await fetch(`${url}/api/auth/sign-up/email`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: url },
    body: JSON.stringify({ email: `ada-${randomBytes(4).toString("hex")}@example.com`, password: "correct-horse-battery-staple", name: "Ada" }),
  });
  expect(signUp.status).toBe(200);
  const cookie = cookieOf(signUp);
  const client: any = createClient<any>({ url, headers: { cookie, origin: url } });

  const first = await client.post.create({ title: "first" });
  expect(first).toMatchObject({ id: expect.any(Number), title: "first", status: "draft" });
  expect((await client.post.list({})).map((post: { title: string }) => post.title)).toEqual(["first"]);

  // The live list: its snapshot, then a new one after a write.
  const live = (await client.post.live({})) as AsyncIterableIterator<{ title: string }[]>;
  try {
    const snapshot = await live.next();
    expect(snapshot.value.map((post: { title: string }) => post.title)).toEqual(["first"]);
    await client.post.create({ title: "second" });
    const delta = await live.next();
    expect(delta.value.map((post: { title: string }) => post.title).sort()).toEqual(["first", "second"]);
  } finally {
    await live.return?.();
  }

  const bytes = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...new TextEncoder().encode(url)]);
  const file = await client.file.upload({ file: new File([bytes], "cover.png", { type: "image/png" }), attach: { table: "post", entityId: first.id, role: "cover" } });
  expect(file).toMatchObject({ name: "cover.png", type: "image/png", size: bytes.length });
  const download = await fetch(`${url}/files/${file.id}`);
  expect(download.status).toBe(200);
  expect(download.headers.get("content-type")).toBe("image/png");
  expect(new Uint8Array(await download.arrayBuffer())).toEqual(bytes);

  // Channels' WebSocket: a reader joins the post's room signed out, the author joins and talks.
  const reader = await openSocket(url);
  const author = await openSocket(url, { cookie, origin: url });
  try {
    for (const socket of [reader, author]) {
      socket.send({ type: "join", channel: `post:${first.id}` });
      expect(await socket.next((frame) => frame.type === "joined" || frame.type === "error", 10_000, "joined")).toEqual({ type: "joined", channel: `post:${first.id}` });
    }
    author.send({ type: "send", channel: `post:${first.id}`, event: "chat", payload: { text: "hello from the author" }, ref: 1 });
    expect(await author.next((frame) => frame.ref === 1, 10_000, "the send's answer")).toMatchObject({ type: "ok", ref: 1 });
    expect(await reader.next((frame) => frame.type === "message", 10_000, "the chat message")).toMatchObject({
      type: "message",
      channel: `post:${first.id}`,
      event: "chat",
      payload: { text: "hello from the author" },
    });
    // Sending needs a signed-in reader.
    reader.send({ type: "send", channel: `post:${first.id}`, event: "chat", payload: { text: "hi" }, ref: 2 });
    expect(await reader.next((frame) => frame.ref === 2, 10_000, "the refusal")).toMatchObject({ type: "error", status: 401, ref: 2 });
  } finally {
    reader.close();
    author.close();
  }
}

/** SIGTERM: the app closes (the embedded database's lock file goes with it) and the process ends. */
async function stop(served: Served, runtime: string): Promise<void> {
  served.child.kill("SIGTERM");
  const exit = await exitOf(served.child, 30_000, `the blog on ${runtime} after SIGTERM`);
  // The signal is raised again once the app is closed, so the process ends by it, as by default.
  expect(exit.signal ?? exit.code, served.output.text).toBe("SIGTERM");
  if (served.dataDir) expect(existsSync(`${served.dataDir}.lock`), "the data directory's lock, released by close()").toBe(false);
}

it("on another runtime, trellis/bun and trellis/deno refuse before touching the app, naming what to run", async () => {
  const app = () => {
    throw new Error("the app was built");
  };
  await expect(serveBun(app)).rejects.toThrow("trellis/bun serves on Bun only: run this file with `bun`, or use serve() from trellis/node");
  await expect(serveDeno(app)).rejects.toThrow("trellis/deno serves on Deno only: run this file with `deno run`, or use serve() from trellis/node");
});

const skipped = Object.fromEntries((["bun", "deno"] as const).map((runtime) => [runtime, built ? cannotRun(RUNTIMES[runtime].bin) : "no fresh build"]));
for (const [runtime, reason] of Object.entries(skipped)) if (built && reason) console.log(`skipping the ${runtime} suite: its binary cannot run here (${reason})`);
// The PostgreSQL runs need a server: CI starts one and exports DATABASE_URL; a machine without one runs the embedded database only.
if (built && !process.env.DATABASE_URL) console.log("skipping the Bun and Deno runs on PostgreSQL: DATABASE_URL is not set");

// The blog built once for every runtime, as `npm start` builds it.
beforeAll(async () => {
  if (Object.values(skipped).some((reason) => !reason)) await buildBlog();
}, 180_000);

for (const runtime of ["bun", "deno"] as const) {
  const reason = skipped[runtime];

  describe.skipIf(Boolean(reason))(`trellis/${runtime}`, () => {
    const track = killAfterEach();
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), `trellis-${runtime}-`));
    });
    afterAll(async () => {
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it("the blog on the embedded database: sign up, create, list, live delta, upload, download, a channel socket, then a graceful SIGTERM", { timeout: 180_000 }, async () => {
      const served = await start(runtime, { DATA_DIR: join(dir, "db") });
      track(served.child);
      expect(served.output.text).toMatch(/embedded PostgreSQL \(PGlite\)/);
      // The control channel the `trellis` commands use opened beside the data directory.
      expect(served.output.text).not.toContain("no control channel");
      expect(existsSync(join(dir, "db.control"))).toBe(true);
      await scenario(served);
      await stop(served, runtime);
    });

    it.skipIf(!process.env.DATABASE_URL)("the blog on PostgreSQL: the same, live deltas and channel messages through LISTEN/NOTIFY", { timeout: 180_000 }, async () => {
      const schema = `rt_${runtime}_${randomBytes(4).toString("hex")}`;
      const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await admin.connect();
      await admin.query(`create schema ${schema}`);
      try {
        const url = new URL(process.env.DATABASE_URL!);
        url.searchParams.set("options", `-c search_path=${schema}`);
        const served = await start(runtime, { DATABASE_URL: url.href });
        track(served.child);
        expect(served.output.text).toMatch(/"engine":"PostgreSQL/);
        await scenario(served);
        await stop(served, runtime);
      } finally {
        await admin.query(`drop schema if exists ${schema} cascade`);
        await admin.end();
      }
    });

    it("refuses what the runtime cannot run before the app starts, with the reason and the way out", { timeout: 60_000 }, async () => {
      const { bin, smoke } = RUNTIMES[runtime];
      const child = track(spawn(bin, smoke, { cwd: root, env: { ...childEnv, DB_KIND: "sqlite", PORT: String(await freePort()) }, stdio: ["ignore", "pipe", "pipe"] }));
      const output = outputOf(child);
      const exit = await exitOf(child, 50_000, `the sqlite app on ${runtime}`);
      expect(exit.code, output.text).toBe(1);
      expect(output.text).toContain("Trellis could not start: RUNTIME_UNSUPPORTED");
      expect(output.text).toContain(`cannot run on ${runtime === "bun" ? "Bun" : "Deno"}: the SQLite dialect loads better-sqlite3`);
    });
  });
}

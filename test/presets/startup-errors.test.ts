import { spawn } from "node:child_process";
import { createServer, type Server } from "node:net";
import { fileURLToPath } from "node:url";
import { exitOf } from "../support/children.js";
import { fixtureArgs } from "../support/fixture-child.js";
import { afterAll, beforeAll, describe, it } from "vitest";

/**
 * A start-up error through the real process, as `node server.ts` (or `npm start`) shows it: one
 * block with the code, the message and the fix, exit status 1, and the stack only with DEBUG.
 */
const fixture = fileURLToPath(new URL("./startup-child.fixture.mjs", import.meta.url));

function run(mode: string, env: Record<string, string> = {}, extra: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string }> {
  // The child runs as a user runs it, not as part of a test run (which keeps errors as rejections).
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(VITEST|JEST_WORKER_ID$|NODE_TEST_CONTEXT$|DEBUG$)/.test(key)));
  const child = spawn(process.execPath, [...fixtureArgs(fixture), mode, ...extra], { env: { ...inherited, NODE_ENV: "development", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  // A start-up error ends the process: one still running after 45 s is a failure, shown with its output.
  return exitOf(child, 45_000, `the ${mode} start`).then(
    ({ code }) => ({ code, stdout, stderr }),
    (error: Error) => {
      child.kill("SIGKILL");
      throw new Error(`${error.message}\n${stdout}${stderr}`);
    },
  );
}

const STACK_LINE = /^\s+at /m;

// Each case is its own process: they run at the same time.
describe("start-up errors read as errors", { concurrent: true }, () => {
  let holder: Server;
  let heldPort: number;
  beforeAll(async () => {
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", () => resolve()));
    heldPort = (holder.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => holder.close(() => resolve())));

  it("a database that cannot be reached: code, message, fix, exit 1, no stack", async ({ expect }) => {
    const { code, stderr } = await run("database");
    expect(code).toBe(1);
    expect(stderr).toContain("Trellis could not start: DB_UNREACHABLE");
    expect(stderr).toContain("Cannot reach PostgreSQL at 127.0.0.1:1");
    expect(stderr).toContain("fix: start the database server, or correct the host and port in DATABASE_URL");
    expect(stderr).not.toMatch(STACK_LINE);
    expect(stderr).not.toContain("plugin: undefined");
    expect(stderr.trim().split("\n").length).toBeLessThanOrEqual(6);
  }, 60_000);

  it("the same with DEBUG set: the stack follows the block", async ({ expect }) => {
    const { code, stderr } = await run("database", { DEBUG: "1" });
    expect(code).toBe(1);
    expect(stderr).toContain("Trellis could not start: DB_UNREACHABLE");
    expect(stderr).toMatch(STACK_LINE);
  }, 60_000);

  it("a port in use", async ({ expect }) => {
    const { code, stderr } = await run("ok", {}, [String(heldPort)]);
    expect(code).toBe(1);
    expect(stderr).toContain("Trellis could not start: SERVE_PORT_IN_USE");
    expect(stderr).toContain(`Port ${heldPort} on 127.0.0.1 is already in use`);
    expect(stderr).not.toMatch(STACK_LINE);
  }, 60_000);

  it("a missing secret names the variable to set", async ({ expect }) => {
    const { code, stderr } = await run("no-secret");
    expect(code).toBe(1);
    expect(stderr).toContain("Trellis could not start: AUTH_SECRET_MISSING");
    expect(stderr).toContain('fix: set AUTH_SECRET to at least 32 random characters: AUTH_SECRET="$(openssl rand -base64 32)"');
    expect(stderr).not.toMatch(STACK_LINE);
  }, 60_000);

  it("a missing optional package gives the npm install line", async ({ expect }) => {
    const { code, stderr } = await run("peer");
    expect(code).toBe(1);
    expect(stderr).toContain("Trellis could not start: PEER_MISSING");
    expect(stderr).toContain("fix: npm install trellis-absent-peer");
    expect(stderr).not.toMatch(STACK_LINE);
  }, 60_000);

  it("in production: a secret under 32 characters is refused, and a localhost baseUrl is warned about", async ({ expect }) => {
    const [short, started, development] = await Promise.all([run("short-secret", { NODE_ENV: "production" }), run("ok", { NODE_ENV: "production" }), run("short-secret")]);
    expect(short.code).toBe(1);
    expect(short.stderr).toContain("Trellis could not start: AUTH_SECRET_TOO_SHORT");
    expect(short.stderr).toContain("fix: set AUTH_SECRET");
    expect(started.code).toBe(0);
    expect(started.stdout).toContain("READY http://127.0.0.1:");
    expect(started.stderr).toContain("[trellis] SERVE_BASE_URL_LOCAL: baseUrl is http://localhost:3000 while NODE_ENV=production");
    // The user's project, not this repository's example: no word of "the blog".
    expect(started.stderr).toContain("set it to the address users reach the app at (a project made by \"trellis new\" reads it from APP_BASE_URL)");
    expect(started.stderr).not.toMatch(/blog/i);
    // Outside production: neither.
    expect(development.code).toBe(0);
    expect(development.stderr).not.toContain("SERVE_BASE_URL_LOCAL");
  }, 90_000);
});

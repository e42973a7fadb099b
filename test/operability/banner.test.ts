import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { App } from "../../presets/trellis.js";
import { serve, type RunningServer } from "../../presets/node.js";
import { sqliteDialect } from "../../kernel/db/dialect/sqlite.js";
import { postgresDialect } from "../../kernel/db/dialect/postgres.js";
import { localLive } from "../../kernel/db/dialect/live-providers.js";
import { embedded } from "../../kernel/embedded/index.js";
import { createBlog } from "../../examples/blog/app.js";
import { fakeLogger } from "./fake-logger.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { schema } from "../../kernel/schema/index.js";
import { memoryStorage } from "../../kernel/storage/index.js";

let running: RunningServer | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
  vi.restoreAllMocks();
});

describe("the start banner", () => {
  it("says where the app listens, its database, schema, plugins in order, surfaces and procedures", async () => {
    const shown: string[] = [];
    running = await serve(createBlog(embedded({ dataDir: "memory://" }), { logger: false }), { port: 0, handleSignals: false, banner: (text) => shown.push(text) });
    expect(shown).toEqual([running.banner]);
    const lines = running.banner.split("\n");
    expect(lines[0]).toBe(`Trellis Blog is listening on ${running.url}`);
    expect(running.banner).toMatch(/database\s+embedded PostgreSQL \(PGlite\)\s+memory:\/\//);
    expect(running.banner).toMatch(/schema\s+version 4 \(4 registered\), migrations applied now: 0001_1, 0002_2, 0003_3, 0004_4/);
    const plugins = running.app.describe().plugins.map((plugin) => plugin.name);
    expect(plugins.slice(0, 4)).toEqual(["telemetry", "cors", "body-limit", "auth"]);
    expect(running.banner).toContain(`plugins     ${plugins.join(" > ")}\n`);
    expect(running.banner).toMatch(new RegExp(`procedures\\s+${running.app.describe().procedures.length}\\n`));
    expect(running.banner).toMatch(/surfaces\s+routes\s+GET \/\n/);
    expect(running.banner).toMatch(/\n\s+auth\s+\/auth\/\*\* \(\d+ routes\), \/api\/auth\/\*\*/);
    expect(running.banner).toMatch(/\n\s+health\s+GET \/health/);
    expect(running.banner).toMatch(/\n\s+rpc\s+\/rpc\/\*\*/);
    // A surface with many routes under one segment is summarised: the block stays one screen.
    expect(running.banner).toMatch(/\n\s+openapi\s+\/rest\/\*\* \(\d+ routes\), GET \/openapi.json, \/docs\/\*\* \(\d+ routes\)\n/);
    // Where to go next, and what to fix before going live.
    expect(running.banner).toContain(`  open        API docs    ${running.url}/docs\n`);
    expect(running.banner).toContain(`              dashboard   ${running.url}/_admin\n`);
    expect(running.banner).toContain(`              MCP         ${running.url}/mcp\n`);
    expect(running.banner).toContain("warning     the auth secret is a development one: set AUTH_SECRET");
    expect(running.banner).toContain("warning     nobody holds the admin role yet: run `npx trellis admin create <email>`");
  }, 90_000); // the process's first memory:// database builds the template: slow on a loaded machine

  it("says nothing about admins once one exists, nor about a strong secret", async () => {
    const v1 = schema("1").auth().build();
    const secret = "A9f3kQ2mZ7pL0vB8nR4tY6wE1xU5sD3h";
    const app = new App({ db: embedded({ dataDir: "memory://" }), logger: false }).schema(v1).auth({ secret, emailAndPassword: { enabled: true } }).admin();
    const built = await app.start();
    await built.db.insertInto("user").values({ id: "u1", email: "root@example.com", name: "Root", emailVerified: false, role: "admin", createdAt: new Date(), updatedAt: new Date() }).execute();
    running = await serve(built, { port: 0, handleSignals: false, banner: () => {} });
    expect(running.banner).toContain(`dashboard   ${running.url}/_admin`);
    expect(running.banner).not.toContain("warning");
  }, 60_000);

  it("warns when the storage keeps files in memory", async () => {
    const db = { dialect: sqliteDialect({ filename: ":memory:" }), kind: "sqlite" as const };
    running = await serve(new App({ db, logger: false, storage: memoryStorage() }), { port: 0, handleSignals: false, banner: () => {} });
    expect(running.banner).toContain("warning     the storage is memoryStorage(): stored files are lost at every restart while their rows stay");
    await running.close();
    running = await serve(new App({ db, logger: false }), { port: 0, handleSignals: false, banner: () => {} });
    expect(running.banner).not.toContain("memoryStorage");
  });

  it("names the database file, and says when the schema is already up to date", async () => {
    const dir = mkdtempSync(join(tmpdir(), "trellis-banner-"));
    const filename = join(dir, "app.db");
    const v1 = schema("1").table("note", (t) => ({ id: t.serial().primaryKey(), text: t.text() })).build();
    const app = () => new App({ db: { dialect: sqliteDialect({ filename }), kind: "sqlite" }, logger: false }).schema(v1).resource("note");
    try {
      running = await serve(app(), { port: 0, handleSignals: false, banner: false });
      expect(running.banner).toContain(`SQLite  ${filename}`);
      expect(running.banner).toMatch(/schema\s+version 1 \(1 registered\), migrations applied now: 0001_1/);
      // The five actions, plus page and batch.
      expect(running.banner).toMatch(/procedures\s+7\n/);
      await running.close();
      running = await serve(app(), { port: 0, handleSignals: false, banner: false });
      expect(running.banner).toMatch(/schema\s+version 1 \(1 registered\), up to date/);
      await running.close();
      running = undefined;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("shows a PostgreSQL URL without its password", async () => {
    const db = { dialect: postgresDialect({ connectionString: "postgres://app:s3cret@db.internal:5432/shop" }), kind: "postgres" as const };
    const built = new App({ db, logger: false }).build();
    expect(built.overview().database).toEqual({ kind: "postgres", engine: "PostgreSQL", location: "postgres://app:***@db.internal:5432/shop" });
    await built.close();
  });

  it("is one structured line through the logger when the output is not a terminal", async () => {
    const logger = fakeLogger();
    const write = vi.spyOn(process.stdout, "write");
    const db = { dialect: sqliteDialect({ filename: ":memory:" }), kind: "sqlite" as const, live: localLive() };
    running = await serve(new App({ name: "Shop", db, logger }).procedure("ping", (base) => base.input(z.object({})).handler(() => "pong")), { port: 0, handleSignals: false, banner: true });
    expect(write).not.toHaveBeenCalled();
    expect(logger.lines).toHaveLength(1);
    expect(logger.lines[0]).toMatchObject({
      level: "info",
      message: `Shop is listening on ${running.url}`,
      fields: { url: running.url, name: "Shop", database: { kind: "sqlite", engine: "SQLite", location: ":memory:" }, procedures: 1, plugins: ["telemetry", "cors", "body-limit", "health"] },
    });
  });

  it("is not shown under a test runner unless asked for", async () => {
    const write = vi.spyOn(process.stdout, "write");
    const db = { dialect: sqliteDialect({ filename: ":memory:" }), kind: "sqlite" as const };
    running = await serve(new App({ db, logger: false }), { port: 0, handleSignals: false });
    expect(write).not.toHaveBeenCalled();
    expect(running.banner).toContain("is listening on");
  });
});

import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, it } from "vitest";
import { npmStart, serveBuiltBlog, type StartedBlog } from "../support/npm-start.js";

describe("npm start: the blog configured from the environment", { concurrent: true }, () => {
  // The whole of `npm start` runs once, build included, on the embedded database in DATA_DIR. The
  // other cases run the server half of the script on that build: the refusals and the PostgreSQL
  // start. They are processes of their own, so they run at the same time.
  let dataDir: string;
  let blog: StartedBlog;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "trellis-blog-"));
    // Production needs a mail transport (nothing connects to it until a message leaves).
    blog = await npmStart({ HOST: "127.0.0.1", PORT: "0", DATA_DIR: dataDir, DATABASE_URL: "", NODE_ENV: "production", AUTH_SECRET: randomBytes(32).toString("base64"), SMTP_URL: "smtp://127.0.0.1:2525" });
  }, 120_000);
  afterAll(async () => {
    await blog?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("refuses the development secret when NODE_ENV=production, naming AUTH_SECRET", async ({ expect }) => {
    const failed = await serveBuiltBlog({ NODE_ENV: "production", AUTH_SECRET: "", PORT: "0", DATA_DIR: "memory://", DATABASE_URL: "" }).then(
      async (blog) => {
        await blog.stop();
        return undefined;
      },
      (error: { code: number; output: string }) => error,
    );
    expect(failed?.code).toBe(1);
    // Every problem of the build, each with its code and fix (the mail transport is missing too).
    expect(failed?.output).toContain("Trellis could not start: KERNEL_VALIDATION_FAILED");
    expect(failed?.output).toContain("AUTH_SECRET_MISSING (auth): .auth() needs a secret");
    expect(failed?.output).toContain('fix: set AUTH_SECRET to at least 32 random characters');
    expect(failed?.output).not.toMatch(/^\s+at /m);
  }, 120_000);

  it("prints a malformed DATABASE_URL as one block with its fix, and exits 1", async ({ expect }) => {
    const failed = await serveBuiltBlog({ DATABASE_URL: "not-a-url", PORT: "0" }).then(
      async (blog) => {
        await blog.stop();
        return undefined;
      },
      (error: { code: number; output: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.output).toContain("Trellis could not start: DB_URL_INVALID");
    expect(failed?.output).toContain("fix: set DATABASE_URL to postgres://user:password@host:5432/database");
    expect(failed?.output).not.toMatch(/^\s+at /m);
  }, 120_000);

  it("refuses to start in production without a mail transport, naming MAIL_TRANSPORT_MISSING", async ({ expect }) => {
    const env = { NODE_ENV: "production", AUTH_SECRET: randomBytes(32).toString("base64"), SMTP_URL: "", PORT: "0", DATA_DIR: "memory://", DATABASE_URL: "" };
    const failed = await serveBuiltBlog(env).then(
      async (blog) => {
        await blog.stop();
        return undefined;
      },
      (error: { code: number; output: string }) => error,
    );
    expect(failed?.code).not.toBe(0);
    expect(failed?.output).toContain("MAIL_TRANSPORT_MISSING");
  }, 120_000);

  it("listens on HOST and PORT and keeps the embedded database in DATA_DIR", async ({ expect }) => {
    expect(blog.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const health = await fetch(`${blog.url}/health`);
    expect(await health.json()).toEqual({ status: "ok", database: "up" });
    expect(existsSync(join(dataDir, "PG_VERSION"))).toBe(true);
  }, 120_000);

  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) console.log("skipping npm start on PostgreSQL: DATABASE_URL is not set");
  it.skipIf(!databaseUrl)("uses PostgreSQL when DATABASE_URL is set", async ({ expect }) => {
    const schema = `blog_${randomBytes(6).toString("hex")}`;
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    try {
      const url = new URL(databaseUrl!);
      url.searchParams.set("options", `-c search_path=${schema}`);
      const blog = await serveBuiltBlog({ HOST: "127.0.0.1", PORT: "0", DATABASE_URL: url.toString(), DATA_DIR: "" });
      try {
        const list = await fetch(`${blog.url}/rpc/post/list`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
        expect(await list.json()).toEqual({ json: [] });
      } finally {
        await blog.stop();
      }
      const tables = await admin.query("select table_name from information_schema.tables where table_schema = $1", [schema]);
      expect(tables.rows.map((row) => row.table_name)).toEqual(expect.arrayContaining(["post", "comment", "user"]));
    } finally {
      await admin.query(`drop schema if exists ${schema} cascade`);
      await admin.end();
    }
  }, 120_000);
});

import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { SqliteDialect } from "kysely";
import { describe, expect, it } from "vitest";
import { postgresDialect } from "../../kernel/db/dialect/index.js";
import { embedded } from "../../kernel/embedded/index.js";
import { importPeer } from "../../kernel/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { serve } from "../../presets/node.js";
import { families } from "../support/databases.js";
import { gatedDialect } from "./gated-dialect.js";

const v1 = schema("1").table("item", (t) => ({ id: t.serial().primaryKey(), name: t.text() })).build();
const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error) => error);

describe("explained infrastructure errors", () => {
  it("a malformed DATABASE_URL is refused when the dialect is made, with the password hidden", () => {
    for (const url of ["postgres//app:s3cret@db.internal/app", "mysql://app:s3cret@db.internal/app", "postgres://app:s3cret@/app"]) {
      let error: any;
      try {
        postgresDialect({ connectionString: url });
      } catch (thrown) {
        error = thrown;
      }
      expect(error, url).toMatchObject({ code: "DB_URL_INVALID" });
      expect(error.message).not.toContain("s3cret");
      expect(error.message).toContain("postgres://user:password@host:5432/database");
    }
  });

  it("an unreachable database fails start() at once, naming host, port and database, password hidden", async () => {
    const started = Date.now();
    const error = await failure(new App({ db: { dialect: postgresDialect({ connectionString: "postgres://app:s3cret@127.0.0.1:1/appdb" }), kind: "postgres" } }).schema(v1).start());
    expect(error).toMatchObject({ code: "DB_UNREACHABLE" });
    expect(error.message).toContain('PostgreSQL at 127.0.0.1:1, database "appdb" as "app" (postgres://app:***@127.0.0.1:1/appdb)');
    expect(error.message).toMatch(/ECONNREFUSED/);
    expect(error.message).not.toContain("s3cret");
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it.runIf(families().includes("postgres"))("a database that does not exist is named, with the createdb line", async () => {
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = "/trellis_no_such_database";
    const error = await failure(new App({ db: { dialect: postgresDialect({ connectionString: url.toString() }), kind: "postgres" } }).schema(v1).start());
    expect(error).toMatchObject({ code: "DB_NOT_FOUND" });
    expect(error.message).toContain("createdb trellis_no_such_database");
  });

  it("serve() refuses a port in use before opening the database", async () => {
    const holder: Server = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", () => resolve()));
    const port = (holder.address() as { port: number }).port;
    // A database that never opens: serve() would hang here if it set the app up before the port.
    const gated = gatedDialect(new SqliteDialect({ database: new Database(":memory:") }));
    const app = new App({ db: { dialect: gated.dialect, kind: "sqlite" } }).schema(v1);
    const error = await failure(serve(app, { port, hostname: "127.0.0.1", handleSignals: false }));
    expect(error).toMatchObject({ code: "SERVE_PORT_IN_USE" });
    expect(error.message).toContain(`Port ${port} on 127.0.0.1 is already in use`);
    await new Promise<void>((resolve) => holder.close(() => resolve()));
  });

  it("an embedded data directory that cannot be written is named with the fix", () => {
    const file = join(mkdtempSync(join(tmpdir(), "trellis-unwritable-")), "a-file");
    writeFileSync(file, "not a directory");
    let error: any;
    try {
      embedded({ dataDir: join(file, "data") });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toMatchObject({ code: "EMBEDDED_DIR_UNWRITABLE" });
    expect(error.message).toContain(`cannot write the data directory ${join(file, "data")} (ENOTDIR)`);
  });

  it("a missing optional peer names the npm install line", async () => {
    const error = await failure(importPeer("trellis-no-such-peer", "The example feature"));
    expect(error).toMatchObject({ code: "PEER_MISSING" });
    expect(error.message).toBe('The example feature needs the optional package "trellis-no-such-peer", which is not installed. Install it: npm install trellis-no-such-peer');
  });
});

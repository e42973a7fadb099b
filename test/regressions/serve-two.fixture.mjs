/**
 * Serves two apps in one process (and closes the first when `argv[3]` is `closed`): the test stops it with SIGTERM.
 * It imports the package by name: the built bundles when dist/ is fresh (test/support/fixture-child.ts).
 */
import Database from "better-sqlite3";
import { App } from "trellis";
import { sqliteDialect } from "trellis/db";
import { embedded } from "trellis/embedded";
import { serve } from "trellis/node";
import { schema } from "trellis/schema";

const v1 = schema("1").table("note", (t) => ({ id: t.serial().primaryKey(), text: t.text() })).build();
const first = await serve(new App({ db: { kind: "sqlite", dialect: sqliteDialect({ database: new Database(":memory:") }) } }).schema(v1), { port: 0, hostname: "127.0.0.1", banner: false });
const second = await serve(new App({ db: embedded({ dataDir: process.argv[2] }) }).schema(v1).resource("note"), { port: 0, hostname: "127.0.0.1", banner: false });
if (process.argv[3] === "closed") await first.close();
console.log(`READY ${second.url}`);

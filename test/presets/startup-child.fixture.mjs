/**
 * A small app that fails to start in the way `argv[2]` names, served by `serve()` as a user's
 * server.ts would be: the start-up error test reads what it prints and its exit status.
 */
import Database from "better-sqlite3";
import { App } from "trellis";
import { importPeer, definePlugin } from "trellis/kernel";
import { postgresDialect, sqliteDialect } from "trellis/db";
import { schema } from "trellis/schema";
import { serve } from "trellis/node";

const [, , mode, port] = process.argv;
const v1 = schema("1").auth().table("note", (t) => ({ id: t.serial().primaryKey(), text: t.text() })).build();
const db =
  mode === "database"
    ? { kind: "postgres", dialect: postgresDialect({ connectionString: "postgres://app@127.0.0.1:1/appdb" }) }
    : { kind: "sqlite", dialect: sqliteDialect({ database: new Database(":memory:") }) };
const secret = mode === "short-secret" ? "too-short" : mode === "no-secret" ? "" : "a-secret-that-is-long-enough-0123456789";
let app = new App({ baseUrl: "http://localhost:3000", db }).schema(v1).auth({ secret, emailAndPassword: { enabled: true } }).resource("note");
if (mode === "peer") {
  app = app.use(definePlugin({ name: "needs-peer", build: (ctx) => void ctx.hooks.ready.tap(() => importPeer("trellis-absent-peer", "The needs-peer plugin")) }));
}
const { url } = await serve(app, { port: Number(port ?? 0), hostname: "127.0.0.1", handleSignals: false, banner: false });
console.log(`READY ${url}`);
process.exit(0);

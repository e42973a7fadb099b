import { TrellisError } from "../kernel/index.js";
import { App } from "./app.js";
import type { BuiltApp } from "./types.js";

/**
 * What an app can use on Node but not on this runtime, found before anything starts (docs/deploy.md
 * keeps the same list). better-sqlite3 is a native addon built on the V8 API rather than Node-API:
 * Bun refuses to load it and Deno loads Node-API addons only.
 */
const UNSUPPORTED: Record<string, { kind: string; why: string }[]> = {
  bun: [{ kind: "sqlite", why: "the SQLite dialect loads better-sqlite3, which Bun does not support" }],
  deno: [{ kind: "sqlite", why: "the SQLite dialect loads better-sqlite3, a native addon Deno cannot load (Node-API addons only)" }],
};

/** Throws `RUNTIME_UNSUPPORTED` naming every feature of the app this runtime cannot run. */
export function assertRuntimeSupports(runtime: "bun" | "deno", app: App<any, any, any> | BuiltApp<any, any>): void {
  const kind = app instanceof App ? app.options.db.kind : app.overview().database.kind;
  const problems = (UNSUPPORTED[runtime] ?? []).filter((rule) => rule.kind === kind);
  if (problems.length === 0) return;
  throw new TrellisError(
    "RUNTIME_UNSUPPORTED",
    `This app cannot run on ${runtime === "bun" ? "Bun" : "Deno"}: ${problems.map((problem) => problem.why).join("; ")}. Use the embedded database (embedded() from trellis/embedded) or PostgreSQL, or serve it on Node (trellis/node).`,
  );
}

import { sql } from "kysely";
import { definePlugin, within, type AppPlugin, type SealedApp } from "../../kernel/index.js";

export type HealthConfig = boolean | {
  /**
   * Where the probe is mounted.
   * @default "/health"
   */
  path?: string;
  /**
   * How long the `select 1` probe may take before the answer is 503.
   * @default 2000
   */
  timeoutMs?: number;
};

/**
 * `GET /health`: 200 `{ status: "ok", database: "up" }` when the app's setup is done and `select 1`
 * answers, both in time; else 503 `{ status: "error", database: "down" }`, in every state
 * (starting, setup failed, connection lost, closed). Stage `observe`: it only reads the database, and a user
 * `.route()` on the same path wins because user routes are matched first.
 */
export function healthPlugin(config: Exclude<HealthConfig, boolean> = {}): AppPlugin {
  const path = config.path ?? "/health";
  const timeoutMs = config.timeoutMs ?? 2000;
  return definePlugin({
    name: "health",
    stage: "observe",
    build(ctx) {
      const { db, probe } = ctx.resources;
      let app: SealedApp | undefined;
      ctx.hooks.sealed.tap((sealed) => (app = sealed));
      const headers = { "cache-control": "no-store" };
      return {
        routes: [
          {
            method: "GET",
            path,
            context: false,
            // Answers while the app is starting, after its setup failed and after close(): a probe
            // that waited for setup would hang, or never run, exactly when it matters.
            beforeReady: true,
            handler: async () => {
              if (app?.state() === "closed") return Response.json(DOWN, { status: 503, headers });
              try {
                // Setup first (it is retried after a failure), then the probe, both within the timeout.
                await within((async () => {
                  await app?.ready();
                  // A database whose single connection may be busy says itself whether it is up.
                  if (probe) await probe();
                  else await sql`select 1`.execute(db);
                })(), timeoutMs, `health probe timed out after ${timeoutMs} ms`);
                return Response.json({ status: "ok", database: "up" }, { headers });
              } catch (error) {
                ctx.report(error, "route");
                return Response.json(DOWN, { status: 503, headers });
              }
            },
          },
        ],
      };
    },
  });
}

const DOWN = Object.freeze({ status: "error", database: "down" });

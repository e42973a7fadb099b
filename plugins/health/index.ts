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
 * answers, both in time; 503 `{ status: "starting", database: "up" }` while the schema is not
 * migrated yet or a migration runs; else 503 `{ status: "error", database: "down" }`, in every state
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
      const probeOnce = (): Promise<unknown> => {
        try {
          return Promise.resolve(probe ? probe() : sql`select 1`.execute(db));
        } catch (error) {
          return Promise.reject(error);
        }
      };
      // Set up, then the probe; `starting`: set up, but the schema is not migrated yet (or a migration runs).
      const check = async (): Promise<boolean> => {
        await app?.ready();
        await probeOnce();
        return app?.state() === "starting";
      };
      // Once ready, setup has nothing left to wait for: the probe alone, with no async frame around it.
      const probed = (): Promise<boolean> => (app?.state() === "ready" ? probeOnce().then(isStarting) : check());
      const isStarting = () => app?.state() === "starting";
      return {
        routes: [
          {
            method: "GET",
            path,
            context: false,
            // Answers while the app is starting, after its setup failed and after close(): a probe
            // that waited for setup would hang, or never run, exactly when it matters.
            beforeReady: true,
            handler: () => {
              if (app?.state() === "closed") return answer(DOWN, 503);
              // Setup first (it is retried after a failure), then the probe, both within the timeout.
              return within(probed(), timeoutMs, `health probe timed out after ${timeoutMs} ms`).then(
                (starting) => (starting ? answer(STARTING, 503) : answer(UP, 200)),
                (error: unknown) => {
                  ctx.report(error, "route");
                  return answer(DOWN, 503);
                },
              );
            },
          },
        ],
      };
    },
  });
}

const UP = JSON.stringify({ status: "ok", database: "up" });
const DOWN = JSON.stringify({ status: "error", database: "down" });
const STARTING = JSON.stringify({ status: "starting", database: "up" });

/** Headers as a plain object, not `Headers`: the Node adapter writes such a response on its fast path. */
function answer(body: string, status: number): Response {
  return new Response(body, { status, headers: { "content-type": "application/json", "cache-control": "no-store" } });
}

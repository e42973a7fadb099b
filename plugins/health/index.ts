import { sql } from "kysely";
import { definePlugin, type AppPlugin } from "../../kernel/index.js";

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
 * `GET /health`: 200 `{ status: "ok", database: "up" }` when `select 1` answers in time, else 503
 * `{ status: "error", database: "down" }`. Stage `observe`: it only reads the database, and a user
 * `.route()` on the same path wins because user routes are matched first.
 */
export function healthPlugin(config: Exclude<HealthConfig, boolean> = {}): AppPlugin {
  const path = config.path ?? "/health";
  const timeoutMs = config.timeoutMs ?? 2000;
  return definePlugin({
    name: "health",
    stage: "observe",
    build(ctx) {
      const { db } = ctx.resources;
      return {
        routes: [
          {
            method: "GET",
            path,
            context: false,
            handler: async () => {
              try {
                await withTimeout(sql`select 1`.execute(db), timeoutMs);
                return Response.json({ status: "ok", database: "up" }, { headers: { "cache-control": "no-store" } });
              } catch (error) {
                ctx.report(error, "route");
                return Response.json({ status: "error", database: "down" }, { status: 503, headers: { "cache-control": "no-store" } });
              }
            },
          },
        ],
      };
    },
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`health probe timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

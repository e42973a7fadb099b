/**
 * One replica for the scale-out benchmark: the app on PostgreSQL (the schema named by BENCH_SCHEMA)
 * with the Redis rate-limit store when REDIS_URL is set, served on a free port. Prints its URL.
 */
import pg from "pg";
import { Redis } from "ioredis";
import { postgresDialect } from "../../kernel/db/dialect/entry.js";
import { redisRateLimitStore } from "../../kernel/redis/index.js";
import { serve } from "../../presets/node.js";
import { benchApp } from "./replica-app.js";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 5, options: `-c search_path=${process.env.BENCH_SCHEMA}` });
const redis = process.env.REDIS_URL ? new Redis(process.env.REDIS_URL) : undefined;
const store = redis ? redisRateLimitStore(redis, { prefix: `${process.env.BENCH_SCHEMA}:` }) : undefined;
const server = await serve(benchApp({ dialect: postgresDialect({ pool }), kind: "postgres" }, store), { port: 0, hostname: "127.0.0.1", handleSignals: false });
console.log(JSON.stringify({ url: server.url }));
process.on("SIGTERM", async () => {
  await server.close();
  redis?.disconnect();
  process.exit(0);
});

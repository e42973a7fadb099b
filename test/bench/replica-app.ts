import { schema } from "../../kernel/schema/index.js";
import type { DatabaseConfig } from "../../kernel/index.js";
import { App, type RateLimitStore } from "../../presets/trellis.js";

export const benchSchema = schema("1")
  .table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text(), body: t.text() }))
  .build();

/** The app every replica runs: a post resource, rate limited far above what the load reaches. */
export function benchApp(db: DatabaseConfig, store?: RateLimitStore) {
  return new App({ db, onError: () => {}, rateLimit: { max: 1e9, windowMs: 60_000, store } }).schema(benchSchema).resource("post");
}

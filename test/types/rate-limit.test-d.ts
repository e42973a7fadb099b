import { describe, expectTypeOf, it } from "vitest";
import type { Redis } from "ioredis";
import type { RequestEvent, SessionUser, TrustProxy } from "../../kernel/index.js";
import { App, memoryRateLimitStore, type AppKV, type RateLimitConfig, type RateLimitStore } from "../../presets/trellis.js";
import type { ServeOptions } from "../../presets/node.js";
import { redisKV, redisRateLimitStore, redisSecondaryStorage } from "../../kernel/redis/index.js";
import type { AuthConfig } from "../../plugins/auth/index.js";
import { sqliteMemory } from "../support/app.js";

describe("rate limit types", () => {
  it("types key and skip by the request event and the signed-in user", () => {
    expectTypeOf<RateLimitConfig["key"]>().toEqualTypeOf<((event: RequestEvent, user: SessionUser | null) => string | Promise<string>) | undefined>();
    new App({ db: sqliteMemory(), rateLimit: { max: 10, windowMs: 1000, key: (event, user) => user?.id ?? event.clientAddress ?? "x", skip: (event) => event.path === "/rpc/ping" } });
    // @ts-expect-error max is required
    new App({ db: sqliteMemory(), rateLimit: { windowMs: 1000 } });
    // @ts-expect-error only "open" or "closed"
    new App({ db: sqliteMemory(), rateLimit: { max: 1, windowMs: 1, onStoreError: "maybe" } });
  });

  it("accepts the memory and Redis stores, the Redis KV and secondary storage where they belong", () => {
    expectTypeOf(memoryRateLimitStore()).toMatchTypeOf<RateLimitStore>();
    const redis = {} as Redis;
    expectTypeOf(redisRateLimitStore(redis)).toEqualTypeOf<RateLimitStore>();
    expectTypeOf(redisKV(redis)).toEqualTypeOf<AppKV>();
    expectTypeOf(redisSecondaryStorage(redis)).toMatchTypeOf<NonNullable<AuthConfig["secondaryStorage"]>>();
  });

  it("takes a hop count, a proxy list or a boolean for trustProxy", () => {
    expectTypeOf<ServeOptions["trustProxy"]>().toEqualTypeOf<TrustProxy | undefined>();
    expectTypeOf<1>().toMatchTypeOf<TrustProxy>();
    expectTypeOf<["10.0.0.0/8"]>().toMatchTypeOf<TrustProxy>();
    expectTypeOf<"10.0.0.1">().not.toMatchTypeOf<TrustProxy>();
  });
});

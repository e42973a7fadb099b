/**
 * `trellis/redis`: shared state for several replicas on one Redis, through an ioredis client you
 * create and close (ioredis is an optional peer dependency).
 */
export { redisRateLimitStore, type RedisRateLimitStoreOptions } from "./rate-limit-store.js";
export { redisKV, type RedisKVOptions } from "./kv.js";
export { redisSecondaryStorage, type RedisSecondaryStorageOptions, type AuthSecondaryStorage } from "./secondary-storage.js";

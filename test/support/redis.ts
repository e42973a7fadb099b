import { randomBytes } from "node:crypto";
import { tcpRelay, type TcpRelay } from "./tcp-relay.js";
import { Redis, type RedisOptions } from "ioredis";

export const redisUrl = process.env.REDIS_URL;

let warned = false;
/** True when REDIS_URL is set; otherwise prints why the suite is skipped (once per file). */
export function hasRedis(suite: string): boolean {
  if (!redisUrl && !warned) {
    warned = true;
    console.log(`skipping ${suite}: REDIS_URL is not set`);
  }
  return Boolean(redisUrl);
}

/** A key prefix of its own, so suites sharing one Redis never see each other's keys. */
export function freshPrefix(label: string): string {
  return `test:${label}:${randomBytes(4).toString("hex")}:`;
}

export function openRedis(options: RedisOptions = {}): Redis {
  return new Redis(redisUrl!, options);
}

/** Deletes every key under `prefix`. */
export async function dropPrefix(client: Redis, prefix: string): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await client.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
    cursor = next;
    if (keys.length > 0) await client.del(...keys);
  } while (cursor !== "0");
}

/** A relay in front of Redis that a test can cut and restore on the same port (test/support/tcp-relay.ts). */
export async function redisRelay(): Promise<TcpRelay> {
  const target = new URL(redisUrl!);
  return tcpRelay(target.hostname, Number(target.port || 6379));
}

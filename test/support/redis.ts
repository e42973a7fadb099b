import { randomBytes } from "node:crypto";
import { createServer, connect, type Server, type Socket } from "node:net";
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

/**
 * A TCP relay in front of Redis that a test can cut and restore on the same port, to watch a
 * client lose its server and reconnect.
 */
export interface RedisRelay {
  readonly port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function redisRelay(): Promise<RedisRelay> {
  const target = new URL(redisUrl!);
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((inbound) => {
        const outbound = connect(Number(target.port || 6379), target.hostname);
        for (const socket of [inbound, outbound]) {
          sockets.add(socket);
          socket.on("close", () => sockets.delete(socket));
          socket.on("error", () => socket.destroy());
        }
        inbound.pipe(outbound).pipe(inbound);
      });
      server.listen(port, "127.0.0.1", () => {
        port = (server!.address() as { port: number }).port;
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      if (!server) return resolve();
      server.close(() => resolve());
      server = undefined;
    });
  await listen();
  return {
    get port() {
      return port;
    },
    cut: stop,
    restore: listen,
    close: stop,
  };
}

// A Redis server of the test's own, on a spare loopback port, that the test can stop and start
// again on the same port (the shared server on 6379 is never touched). Skips with a reason when
// redis-server is not installed.
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { existsSync } from "node:fs";

export interface OwnRedis {
  readonly url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

const BINARY = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].find((path) => existsSync(path));

export function redisServerMissing(): string | undefined {
  return BINARY ? undefined : "redis-server is not installed";
}

async function sparePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function ownRedis(): Promise<OwnRedis> {
  const port = await sparePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(BINARY!, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: ["ignore", "pipe", "ignore"] });
    const started = child;
    await new Promise<void>((resolve, reject) => {
      let seen = "";
      // Bounded: a redis-server that never becomes ready (its port taken since it was free) is killed and named.
      const timer = setTimeout(() => {
        started.kill("SIGKILL");
        reject(new Error(`redis-server on port ${port} was not ready within 20 s: ${seen.slice(-500)}`));
      }, 20_000);
      started.stdout!.on("data", (chunk) => {
        seen += chunk;
        if (seen.includes("Ready to accept connections")) {
          clearTimeout(timer);
          resolve();
        }
      });
      started.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited (${code}): ${seen.slice(-500)}`));
      });
    });
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    await new Promise((resolve) => {
      running.once("exit", resolve);
      running.kill("SIGKILL");
    });
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, stop, start };
}

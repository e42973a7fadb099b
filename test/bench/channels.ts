/**
 * Channels: one server process, 1,000 and 10,000 WebSocket connections (clients in a child process)
 * subscribed to one channel and spread over 1,000 channels. For each: fan-out messages per second
 * (messages handed to clients over the time from the first publish to the last receipt),
 * publish-to-receive p50/p99, and the server's RSS per idle connection. Targets: p99 under 50 ms at
 * 10,000 connections, under 20 KB RSS per idle connection.
 */
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import Database from "better-sqlite3";
import { SqliteDialect } from "kysely";
import { z } from "zod";
import { App } from "../../presets/trellis.js";
import { serve } from "../../presets/node.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

function ask(child: ChildProcess, command: object, answer: string): Promise<any> {
  return new Promise((resolve) => {
    const on = (message: any) => {
      if (message.type !== answer) return;
      child.off("message", on);
      resolve(message);
    };
    child.on("message", on);
    child.send(command);
  });
}

async function settledRss(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return process.memoryUsage().rss;
}

export async function run(): Promise<void> {
  const app = new App({ db: { dialect: new SqliteDialect({ database: new Database(":memory:") }), kind: "sqlite" } }).channels(
    { "room:{id}": { join: "public", events: { tick: z.object({ at: z.number(), n: z.number() }) } } },
    { limits: { connectionsPerCaller: 20_000 } },
  );
  const server = await serve(app, { port: 0, hostname: "127.0.0.1", handleSignals: false, banner: false });
  const port = Number(new URL(server.url).port);
  const channels = server.app.sealed.service("channels")!;
  const child = fork(fileURLToPath(new URL("./channels-clients.ts", import.meta.url)), [], { execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  await new Promise((resolve) => child.once("message", resolve));
  console.log("\n## channels (one server process; clients in a child process)\n");
  console.log("| connections | channels | messages published | delivered | fan-out msgs/s | p50 ms | p99 ms | RSS per idle connection | server writes/s | server CPU µs/msg | clients' CPU µs/msg |");
  console.log("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  try {
    for (const count of [1_000, 10_000]) {
      for (const spread of [1, 1_000]) {
        const before = await settledRss();
        await ask(child, { type: "open", port, count, channels: spread }, "opened");
        const after = await settledRss();
        const perConnection = (after - before) / count;
        // Rounds of one message per channel; a pause between rounds lets each round drain.
        const rounds = spread === 1 ? 20 : 5;
        let published = 0;
        let publishMs = 0;
        await ask(child, { type: "mark" }, "marked");
        const cpuBefore = process.cpuUsage();
        const startedAt = performance.timeOrigin + performance.now();
        for (let round = 0; round < rounds; round++) {
          for (let room = 0; room < spread; room++) {
            const at = performance.now();
            channels.publish(`room:${room}` as never, "tick" as never, { at: performance.timeOrigin + at, n: round } as never);
            publishMs += performance.now() - at;
            published++;
          }
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        const { received, lastAt, latencies, cpuMicros } = await ask(child, { type: "collect", expected: rounds * count }, "collected");
        const cpu = process.cpuUsage(cpuBefore);
        const sorted = (latencies as number[]).sort((a, b) => a - b);
        const perSecond = received / ((lastAt - startedAt) / 1000);
        const serverRate = received / (publishMs / 1000);
        console.log(
          `| ${count.toLocaleString("en")} | ${spread.toLocaleString("en")} | ${published} | ${received.toLocaleString("en")} | ${Math.round(perSecond).toLocaleString("en")} | ${percentile(sorted, 0.5).toFixed(1)} | ${percentile(sorted, 0.99).toFixed(1)} | ${(perConnection / 1024).toFixed(1)} KB | ${Math.round(serverRate).toLocaleString("en")} | ${((cpu.user + cpu.system) / received).toFixed(1)} | ${(cpuMicros / received).toFixed(1)} |`,
        );
        await ask(child, { type: "close" }, "closed");
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
    console.log("\nFan-out msgs/s counts messages received over the run including the 50 ms pauses between rounds, so it is a floor; p50/p99 are per delivered message. Server writes/s is messages handed to sockets per second of the server's own fan-out time (the synchronous part of publish). CPU µs/msg is each side's user + system time over the run per delivered message: when the clients' figure is the larger, they, not the server, set the latency.");
  } finally {
    child.kill();
    await server.close();
  }
}

import { os } from "@orpc/server";
import { RPCHandler } from "@orpc/server/fetch";
import { z } from "zod";
import { sql } from "kysely";
import { App, type AppOptions } from "../../presets/trellis.js";
import { sqliteMemory } from "../support/app.js";
import { compare, print } from "./measure.js";
import { cpuOverhead, cpuPerOp, overhead, registerNoopSdk } from "./telemetry-sdk.js";
import { encodeRows } from "./rows.js";

/** A trivial procedure through `app.handle()` against a bare oRPC handler serving the same procedure. */
export async function run(): Promise<void> {
  const input = z.object({ n: z.number() });
  const bare = new RPCHandler(os.router({ add: os.input(input).handler(({ input }) => ({ sum: input.n + 1 })) }));
  const app = new App({ db: sqliteMemory() })
    .procedure("add", (base) => base.input(input).handler(({ input }) => ({ sum: input.n + 1 })))
    .build();
  const body = JSON.stringify({ json: { n: 41 } });
  const request = () =>
    new Request("http://localhost/rpc/add", { method: "POST", headers: { "content-type": "application/json" }, body });
  const check = await (await app.handle(request())).json();
  if (check.json?.sum !== 42) throw new Error(`unexpected answer ${JSON.stringify(check)}`);
  const stats = await compare(
    [
    { name: "bare oRPC RPCHandler", op: async () => (await bare.handle(request(), { prefix: "/rpc", context: {} })).response!.text() },
    { name: "Trellis app.handle()", op: async () => (await app.handle(request())).text() },
    ],
    { rounds: 5 },
  );
  print("Trivial procedure (in-process, sequential)", stats, { of: "Trellis app.handle()", to: "bare oRPC RPCHandler", target: 0.9 });
  await app.close();
  await encodeRows();
  await telemetryOverhead();
}

/**
 * What the telemetry plugin costs on the same procedure plus one that reads a row: left out
 * (`telemetry: false`), registered with no SDK (the default), with `/metrics` on, and with an SDK
 * registered that exports to nothing. Every app runs in alternating rounds; the SDK is global, so
 * its case runs after the others, against the same app without the plugin.
 */
async function telemetryOverhead(): Promise<void> {
  const input = z.object({ n: z.number() });
  const make = (telemetry: AppOptions["telemetry"]) => {
    const app = new App({ db: sqliteMemory(), telemetry })
      .procedure("add", (base) => base.input(input).handler(({ input }) => ({ sum: input.n + 1 })))
      .procedure("read", (base) => base.input(input).handler(async ({ input, context }) => (await sql<{ n: number }>`select ${input.n} as n`.execute(context.db)).rows[0]))
      .build();
    return app;
  };
  const apps = {
    off: make(false),
    noSdk: make(undefined),
    metrics: make({ metrics: { token: "bench-token-0123456789" } }),
  };
  const request = (path: string) => () =>
    new Request(`http://localhost/rpc/${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ json: { n: 41 } }) });
  const op = (app: { handle(r: Request): Promise<Response> }, make: () => Request) => async () => (await app.handle(make())).text();
  console.log("\n## Telemetry overhead (in-process, sequential; best of 5 alternating rounds)");
  for (const path of ["add", "read"]) {
    const make = request(path);
    const [off, noSdk, metrics] = await compare(
      [
        { name: "off", op: op(apps.off, make) },
        { name: "no SDK", op: op(apps.noSdk, make) },
        { name: "metrics", op: op(apps.metrics, make) },
      ],
      { rounds: 5 },
    );
    console.log(overhead(`${path}: plugin on, no SDK registered`, noSdk!.perSecond, off!.perSecond, 2, { of: noSdk!.p50, to: off!.p50 }));
    console.log(overhead(`${path}: /metrics on`, metrics!.perSecond, off!.perSecond, 3, { of: metrics!.p50, to: off!.p50 }));
    const cpu = await cpuPerOp([
      { name: "off", op: op(apps.off, make) },
      { name: "no SDK", op: op(apps.noSdk, make) },
      { name: "metrics", op: op(apps.metrics, make) },
    ]);
    console.log(cpuOverhead(`${path}: plugin on, no SDK registered`, cpu.get("no SDK")!, cpu.get("off")!, 2));
    console.log(cpuOverhead(`${path}: /metrics on`, cpu.get("metrics")!, cpu.get("off")!, 3));
  }
  const unregister = registerNoopSdk();
  try {
    for (const path of ["add", "read"]) {
      const make = request(path);
      const [off, traced] = await compare(
        [
          { name: "off", op: op(apps.off, make) },
          { name: "SDK", op: op(apps.noSdk, make) },
        ],
        { rounds: 5 },
      );
      console.log(overhead(`${path}: SDK registered, no-op exporter`, traced!.perSecond, off!.perSecond, undefined, { of: traced!.p50, to: off!.p50 }));
      const cpu = await cpuPerOp([
        { name: "off", op: op(apps.off, make) },
        { name: "SDK", op: op(apps.noSdk, make) },
      ]);
      console.log(cpuOverhead(`${path}: SDK registered, no-op exporter`, cpu.get("SDK")!, cpu.get("off")!));
    }
  } finally {
    unregister();
  }
  await Promise.all(Object.values(apps).map((app) => app.close()));
}

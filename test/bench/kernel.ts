import { os } from "@orpc/server";
import { RPCHandler } from "@orpc/server/fetch";
import { z } from "zod";
import { sql } from "kysely";
import { App, type AppOptions } from "../../presets/trellis.js";
import { sqliteMemory } from "../support/app.js";
import { compare, print } from "./measure.js";
import { costLine, pairedCosts, registerNoopSdk } from "./telemetry-sdk.js";
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
 * (`telemetry: false`, twice: two identical apps show what the machine cannot tell apart),
 * registered with no SDK (the default), with `/metrics` on, and with an SDK registered that
 * exports to nothing. Paired rounds in one process (`pairedCosts`); the SDK is global, so its case
 * runs after the others, against the same app without the plugin. `npm run bench -- kernel:telemetry`
 * runs this alone.
 */
export async function telemetryOverhead(): Promise<void> {
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
    offAgain: make(false),
    noSdk: make(undefined),
    metrics: make({ metrics: { token: "bench-token-0123456789" } }),
  };
  const request = (path: string) => () =>
    new Request(`http://localhost/rpc/${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ json: { n: 41 } }) });
  const op = (app: { handle(r: Request): Promise<Response> }, make: () => Request) => async () => (await app.handle(make())).text();
  const rounds = Number(process.env.BENCH_ROUNDS ?? 600);
  console.log(`\n## Telemetry overhead (in-process, sequential; ${rounds} paired rounds, cost against the app without the plugin: median [middle half])`);
  for (const path of ["add", "read"]) {
    const make = request(path);
    const costs = await pairedCosts(
      [
        { name: "off", op: op(apps.off, make) },
        { name: "off again", op: op(apps.offAgain, make) },
        { name: "no SDK", op: op(apps.noSdk, make) },
        { name: "metrics", op: op(apps.metrics, make) },
      ],
      { rounds },
    );
    console.log(costLine(`${path}: without the plugin (a second app)`, costs.get("off again")!));
    console.log(costLine(`${path}: plugin on, no SDK registered`, costs.get("no SDK")!, 2));
    console.log(costLine(`${path}: /metrics on`, costs.get("metrics")!, 3));
  }
  const unregister = registerNoopSdk();
  try {
    for (const path of ["add", "read"]) {
      const make = request(path);
      const costs = await pairedCosts(
        [
          { name: "off", op: op(apps.off, make) },
          { name: "SDK", op: op(apps.noSdk, make) },
        ],
        { rounds: Math.ceil(rounds / 2) },
      );
      console.log(costLine(`${path}: SDK registered, no-op exporter`, costs.get("SDK")!));
    }
  } finally {
    unregister();
  }
  await Promise.all(Object.values(apps).map((app) => app.close()));
}

/** Parts of this suite that run alone: `npm run bench -- kernel:telemetry`. */
export const cases = { telemetry: telemetryOverhead };

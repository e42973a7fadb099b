import { z } from "zod";
import { schema, timestamps } from "../../kernel/schema/index.js";
import { App, mcp } from "../../presets/trellis.js";
import { sqliteMemory } from "../support/app.js";
import { compare, print } from "./measure.js";

/**
 * One procedure, three surfaces: the same resource `list` (50 of 1,000 rows, SQLite in memory) over
 * `/rpc` and `/rest`, an MCP `tools/call` against the RPC call it wraps, and the cost of generating
 * the OpenAPI document at start for 50 procedures. All in process through `handle()`.
 */

const model = schema("1")
  .table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text(), body: t.text().nullable(), views: t.integer().default(0), ...timestamps(t) }))
  .build();

export async function run(): Promise<void> {
  const app = new App({ name: "bench", db: sqliteMemory(), onError: () => {} })
    .schema(model)
    .resource("post", { mcp: ["list"] })
    .procedure("math.add", (base) => base.meta(mcp.tool()).input(z.object({ a: z.number(), b: z.number() })).handler(({ input }) => input.a + input.b))
    .openapi({ docs: false })
    .mcp();
  const built = await app.start();
  const rows = Array.from({ length: 1000 }, (_, i) => ({ title: `post ${i}`, body: "text ".repeat(20), views: i }));
  for (let i = 0; i < rows.length; i += 100) await built.db.insertInto("post").values(rows.slice(i, i + 100)).execute();

  const rpcList = () => built.handle(new Request("http://bench/rpc/post/list", { method: "POST", headers: { "content-type": "application/json" }, body: '{"json":{"take":50}}' })).then((r) => r.text());
  const restList = () => built.handle(new Request("http://bench/rest/post?take=50")).then((r) => r.text());
  const mcpCall = (name: string, args: unknown) => () =>
    built
      .handle(
        new Request("http://bench/mcp", {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
        }),
      )
      .then((r) => r.text());
  const rpcAdd = () => built.handle(new Request("http://bench/rpc/math/add", { method: "POST", headers: { "content-type": "application/json" }, body: '{"json":{"a":1,"b":2}}' })).then((r) => r.text());

  const check = JSON.parse(await mcpCall("post_list", { take: 50 })());
  if (JSON.parse(check.result.content[0].text).length !== 50) throw new Error(`MCP list answered ${JSON.stringify(check).slice(0, 200)}`);
  if ((JSON.parse(await restList()) as unknown[]).length !== 50) throw new Error("REST list did not answer 50 rows");

  // Small enough to stay under a minute on a shared 2-core machine.
  const options = { warmup: 100, count: 800, rounds: 2 };
  print("resource list, 50 rows: REST against RPC", await compare([{ name: "POST /rpc/post/list", op: rpcList }, { name: "GET /rest/post?take=50", op: restList }], options), {
    of: "GET /rest/post?take=50",
    to: "POST /rpc/post/list",
    target: 0.9,
  });
  const listStats = await compare([{ name: "POST /rpc/post/list", op: rpcList }, { name: "MCP tools/call post_list", op: mcpCall("post_list", { take: 50 }) }], options);
  print("resource list, 50 rows: MCP tools/call against RPC", listStats, { of: "MCP tools/call post_list", to: "POST /rpc/post/list", target: 0.8 });
  const addStats = await compare([{ name: "POST /rpc/math/add", op: rpcAdd }, { name: "MCP tools/call math_add", op: mcpCall("math_add", { a: 1, b: 2 }) }], options);
  print("trivial procedure: MCP tools/call against RPC", addStats, { of: "MCP tools/call math_add", to: "POST /rpc/math/add", target: 0.8 });
  await built.close();

  // 10 resources: 50 procedures. The difference between starting with and without .openapi() is
  // the document (and the REST runtime) generated once; the first app pays the module load too.
  let wide: any = schema("1");
  for (let i = 0; i < 10; i++) wide = wide.table(`t${i}`, (t: any) => ({ id: t.serial().primaryKey(), name: t.text(), qty: t.integer().nullable(), at: t.timestamp().nullable(), price: t.decimal().nullable() }));
  const wideModel = wide.build();
  const startTime = async (withOpenapi: boolean) => {
    let wideApp = new App({ name: "wide", db: sqliteMemory() }).schema(wideModel);
    for (let i = 0; i < 10; i++) wideApp = wideApp.resource(`t${i}` as never);
    if (withOpenapi) wideApp.openapi({ docs: false });
    const wideBuilt = wideApp.build();
    const t0 = performance.now();
    // ready() is on the kernel's built app, not on the facade's type.
    await (wideBuilt as unknown as { ready(): Promise<void> }).ready();
    const ms = performance.now() - t0;
    const procedures = wideBuilt.describe().procedures.length;
    await wideBuilt.close();
    return { ms, procedures };
  };
  const cold = await startTime(true);
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) samples.push((await startTime(true)).ms - (await startTime(false)).ms);
  samples.sort((a, b) => a - b);
  console.log(`\n## OpenAPI document at start, ${cold.procedures} procedures`);
  console.log(`  first app (loads the peers too): ${cold.ms.toFixed(1)} ms of ready()`);
  console.log(`  generation, median of 5 (ready with .openapi() minus without): ${samples[2]!.toFixed(1)} ms (target < 100) ${samples[2]! < 100 ? "OK" : "ABOVE TARGET"}`);
}

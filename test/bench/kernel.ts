import { os } from "@orpc/server";
import { RPCHandler } from "@orpc/server/fetch";
import { z } from "zod";
import { App } from "../../presets/trellis.js";
import { sqliteMemory } from "../support/app.js";
import { compare, print } from "./measure.js";

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
}

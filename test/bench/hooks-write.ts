import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { openDatabase } from "../support/databases.js";
import { compare, print } from "./measure.js";

/**
 * Resource hooks, part one: `create` through `/rpc` with an empty `beforeCreate` and `afterCreate`
 * against the same create without hooks, on in-memory PGlite, anonymous. The hooked create runs in
 * a transaction of its own (a `before*` hook runs inside the write's transaction) and its after hook
 * once that committed; target 0.95.
 */
export async function run(): Promise<void> {
  const database = await openDatabase("pglite");
  const v1 = schema("1")
    .table("plain", (t) => ({ id: t.serial().primaryKey(), title: t.text(), done: t.boolean().default(false) }))
    .table("hooked", (t) => ({ id: t.serial().primaryKey(), title: t.text(), done: t.boolean().default(false) }))
    .build();
  const app = await new App({ db: { dialect: database.dialect, kind: database.kind } })
    .schema(v1)
    .resource("plain")
    .resource("hooked", { hooks: { beforeCreate: () => undefined, afterCreate: () => undefined } })
    .start();
  const create = (path: string) => async () => {
    const response = await app.handle(
      new Request(`http://localhost/rpc/${path}/create`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ json: { title: "a task" } }) }),
    );
    if (response.status !== 200) throw new Error(`${path}.create: ${response.status} ${await response.text()}`);
    return response.text();
  };
  const stats = await compare(
    [
      { name: "create, no hooks", op: create("plain") },
      { name: "create, empty beforeCreate + afterCreate", op: create("hooked") },
    ],
    { warmup: 200, count: 1500, rounds: 5 },
  );
  print("resource create with empty hooks against none (PGlite, in process)", stats, {
    of: "create, empty beforeCreate + afterCreate",
    to: "create, no hooks",
    target: 0.95,
  });
  await app.close();
  await database.close();
}

export const cases = { write: run };

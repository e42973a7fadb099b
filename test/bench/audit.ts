import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { openDatabase, type Family } from "../support/databases.js";
import { compare, print } from "./measure.js";

/**
 * `npm run bench -- audit`: `create` and `update` through `/rpc` on an app with `.audit()` against
 * the same app without it, each on its own database (in-memory PGlite; then a schema of its own in
 * DATABASE_URL's PostgreSQL when that is set), anonymous, in one run. With the audit log each write
 * carries the writer's setting in its own RETURNING and its trigger writes an entry in the same
 * transaction; target 0.85 for both.
 */
export async function run(): Promise<void> {
  await runOn("pglite", "PGlite, in process");
  if (process.env.DATABASE_URL) await runOn("postgres", "PostgreSQL on 127.0.0.1");
}

async function runOn(family: Family, where: string): Promise<void> {
  const v1 = schema("1")
    .table("task", (t) => ({ id: t.serial().primaryKey(), title: t.text(), done: t.boolean().default(false) }))
    .build();
  const start = async (audit: boolean) => {
    const database = await openDatabase(family);
    const app = new App({ db: { dialect: database.dialect, kind: database.kind } }).schema(v1).resource("task");
    const built = await (audit ? app.audit() : app).start();
    return { built, database };
  };
  const off = await start(false);
  const on = await start(true);
  const call = (app: typeof off.built, path: string, input: unknown) => async () => {
    const response = await app.handle(new Request(`http://localhost/rpc/${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ json: input }) }));
    if (response.status !== 200) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return response.text();
  };
  let n = 0;
  // Each update sets a new title, so every one is a real change (an unchanged row writes no entry).
  const update = (app: typeof off.built) => () => call(app, "task/update", { where: { id: 1 }, data: { title: `title ${++n}` } })();
  await call(off.built, "task/create", { title: "first" })();
  await call(on.built, "task/create", { title: "first" })();
  const options = { warmup: 200, count: 1500, rounds: 5 };
  const creates = await compare(
    [
      { name: "create, audit off", op: call(off.built, "task/create", { title: "a task" }) },
      { name: "create, audit on", op: call(on.built, "task/create", { title: "a task" }) },
    ],
    options,
  );
  print(`resource create with the audit log against without (${where})`, creates, { of: "create, audit on", to: "create, audit off", target: 0.85 });
  const updates = await compare(
    [
      { name: "update, audit off", op: update(off.built) },
      { name: "update, audit on", op: update(on.built) },
    ],
    options,
  );
  print(`resource update with the audit log against without (${where})`, updates, { of: "update, audit on", to: "update, audit off", target: 0.85 });
  for (const side of [off, on]) {
    await side.built.close();
    await side.database.close();
  }
}

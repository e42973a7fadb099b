/**
 * One life of a process on an embedded data directory, ended by SIGKILL at a chosen moment
 * (durability-cycles.ts). `write`: reports the rows it finds (`ROWS <ids>`), then creates rows
 * through the front door forever, printing `ACK <id>` after each acknowledged write. `migrate`:
 * reports the applied versions and the tables it finds (`STATE <json>`), then migrates to a version
 * with many tables (`MIGRATING`, then `MIGRATED`). The process loads everything first, then waits for
 * a line on stdin before it touches the data directory: the cycles start it while the process before
 * it still holds the directory, and tell it to go once that one is dead.
 */
import { sql } from "kysely";
import { App } from "trellis";
import { embedded } from "trellis/embedded";
import { schema } from "trellis/schema";

const WIDE_TABLES = 120;
const [dataDir, mode] = process.argv.slice(2);
const v1 = schema("1").table("entry", (t) => ({ id: t.serial().primaryKey(), payload: t.text() })).build();
// Many tables, so the migration takes long enough for a kill to land inside it.
let big = schema("2").extend(v1);
for (let i = 0; i < WIDE_TABLES; i++) big = big.table(`wide_${i}`, (t) => ({ id: t.serial().primaryKey(), a: t.text().index(), b: t.integer().nullable().unique() }));
const v2 = big.build();
const print = (line) => process.stdout.write(`${line}\n`);

await new Promise((go) => process.stdin.once("data", go));
process.stdin.destroy();

if (mode === "write") {
  const app = await new App({ db: embedded({ dataDir }), health: false, onError: () => {} }).schema(v1).resource("entry").start();
  const rows = await app.db.selectFrom("entry").select("id").orderBy("id").execute();
  print(`ROWS ${rows.map((row) => row.id).join(",")}`);
  for (;;) {
    const response = await app.handle(
      new Request("http://local/rpc/entry/create", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ json: { payload: "x".repeat(200) } }),
      }),
    );
    if (response.status !== 200) throw new Error(`write failed with ${response.status}: ${await response.text()}`);
    const { json } = await response.json();
    print(`ACK ${json.id}`);
  }
} else {
  const built = new App({ db: embedded({ dataDir }), health: false, onError: () => {} }).schema(v1).schema(v2).build();
  const applied = (await built.sealed.migrations()).map((migration) => migration.name);
  const { rows } = await sql`select count(*) as count from pg_tables where schemaname = current_schema() and tablename like 'wide_%'`.execute(built.db);
  print(`STATE ${JSON.stringify({ applied, wide: Number(rows[0].count) })}`);
  print("MIGRATING");
  const { error } = await built.migrator.migrateToLatest();
  if (error) throw error;
  print("MIGRATED");
  await built.close();
}

import { Kysely, sql } from "kysely";
import { afterAll, expect, it } from "vitest";
import { embedded, type EmbeddedDatabase } from "../../kernel/embedded/index.js";

const opened: EmbeddedDatabase[] = [];
afterAll(async () => {
  await Promise.all(opened.map((database) => database.close()));
});

/** Start-up until the first query answers, through the dialect as the app uses it. */
async function start(): Promise<number> {
  const begin = performance.now();
  const database = embedded({ dataDir: "memory://" });
  opened.push(database);
  const db = new Kysely<any>({ dialect: database.dialect });
  await sql`select 1`.execute(db);
  return performance.now() - begin;
}

it("starts memory:// databases after the first from a template", async () => {
  const cold = await start(); // builds the template: initdb once per process
  const warm = [await start(), await start(), await start()];
  const rss = Math.round(process.memoryUsage().rss / 1e6);
  console.log(
    `embedded memory:// start: cold ${cold.toFixed(0)} ms, warm ${warm.map((ms) => ms.toFixed(0)).join(" / ")} ms; ` +
      `rss ${rss} MB with ${opened.length} instances open`,
  );
  // Loose bound: the figure is printed; this only catches the template not being used.
  expect(Math.min(...warm)).toBeLessThan(cold / 2);
}, 90_000);

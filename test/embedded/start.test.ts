import { Kysely, sql } from "kysely";
import { afterAll, expect, it } from "vitest";
import { existsSync } from "node:fs";
import { embedded, type EmbeddedDatabase } from "../../kernel/embedded/index.js";
import { templateOrigin } from "../../kernel/embedded/template.js";
import { templateCachePath } from "../../kernel/embedded/template-cache.js";

const opened: EmbeddedDatabase[] = [];
afterAll(async () => {
  await Promise.all(opened.map((database) => database.close()));
});

/** Start-up until the first query answers, through the dialect as the app uses it. */
async function start(): Promise<number> {
  const begin = performance.now();
  // In this thread, so the template's origin is observable here (the worker keeps its own).
  const database = embedded({ dataDir: "memory://", thread: "main" });
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
    `embedded memory:// start: cold ${cold.toFixed(0)} ms (template ${templateOrigin()}), warm ${warm.map((ms) => ms.toFixed(0)).join(" / ")} ms; ` +
      `rss ${rss} MB with ${opened.length} instances open`,
  );
  // The first start built the template (initdb) or read it from the project's cache; either way
  // it is on disk now for the next process, and the later starts used it.
  expect(existsSync(templateCachePath("vector")!)).toBe(true);
  if (templateOrigin() === "built") expect(Math.min(...warm)).toBeLessThan(cold / 2);
  else expect(templateOrigin()).toBe("disk");
}, 90_000);

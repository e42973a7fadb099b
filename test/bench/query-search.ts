import { Kysely, sql } from "kysely";
import { createAppDatabase } from "../../kernel/db/database.js";
import { createMigrator } from "../../kernel/db/migrations.js";
import { schema } from "../../kernel/schema/index.js";
import { openDatabase } from "../support/databases.js";
import { compare, print } from "./measure.js";

/**
 * Full-text search on in-memory PGlite, 100,000 posts: `query.post.findMany({ search, take: 20 })`
 * (the generated tsvector column, its GIN index, ranked) against what an app without an index
 * writes, `title ILIKE '%word%' OR body ILIKE '%word%'` ordered by id. A rare word (10 rows) and a
 * common one (1,000 rows): ILIKE stops at its 20th match in id order, so it is at its best on a
 * common word, while search ranks every match before taking 20.
 */

const model = schema("1")
  .table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text(), body: t.text() }))
  .search("post", { title: "A", body: "B" })
  .build();

const ROWS = 100_000;

export async function run(): Promise<void> {
  const database = await openDatabase("pglite");
  const kysely = new Kysely<any>({ dialect: database.dialect });
  const { error } = await createMigrator(kysely, database.kind, [model]).migrateToLatest();
  if (error) throw error;
  const started = performance.now();
  // About 30 words a row: filler, a unique token, "zephyr" in every 10,000th row, "amber" in every 100th.
  await sql`insert into post (title, body)
    select 'post ' || i || case when i % 10000 = 0 then ' zephyr' else '' end,
           repeat('lorem ipsum dolor sit amet ', 5) || md5(i::text) || case when i % 100 = 0 then ' amber' else '' end
    from generate_series(1, ${sql.lit(ROWS)}) as i`.execute(kysely);
  console.log(`\n  (${ROWS.toLocaleString("en")} rows inserted and indexed in ${((performance.now() - started) / 1000).toFixed(1)} s)`);
  await sql`analyze post`.execute(kysely);
  const db = createAppDatabase(kysely, database.kind, model);

  const search = (word: string) => () => db.query.post.findMany({ search: word, take: 20 });
  const ilike = (word: string) => () =>
    kysely.selectFrom("post").select(["id", "title", "body"]).where((eb) => eb.or([eb("title", "ilike", `%${word}%`), eb("body", "ilike", `%${word}%`)])).orderBy("id").limit(20).execute();

  // Same rows: the rare word's ten, and twenty of the common word's matches.
  const rare = (await search("zephyr")()).map((row) => row.id).sort((a, b) => a - b);
  if (JSON.stringify(rare) !== JSON.stringify((await ilike("zephyr")()).map((row) => row.id))) throw new Error("search and ILIKE disagree on the rare word");
  if ((await search("amber")()).length !== 20) throw new Error("search found too few rows for the common word");

  for (const [word, matches] of [["zephyr", 10], ["amber", 1000]] as const) {
    // A full ILIKE scan of 100,000 rows is slow on a loaded machine: size the runs to the slower call.
    const slowest = Math.max(await timed(ilike(word)), await timed(search(word)));
    const count = Math.min(200, Math.max(10, Math.round(5_000 / slowest)));
    const stats = await compare(
      [
        { name: `ILIKE '%${word}%' (baseline)`, op: ilike(word) },
        { name: `findMany search "${word}"`, op: search(word) },
      ],
      { warmup: Math.ceil(count / 10), count },
    );
    print(`search a word in ${matches.toLocaleString("en")} of ${ROWS.toLocaleString("en")} posts on PGlite, 20 rows`, stats, {
      of: `findMany search "${word}"`,
      to: `ILIKE '%${word}%' (baseline)`,
      target: 1,
    });
  }
  await kysely.destroy();
  await database.close();
}

async function timed(op: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await op();
  return performance.now() - start;
}

// Run directly: `npx tsx test/bench/query-search.ts`.
if (import.meta.url === `file://${process.argv[1]}`) await run();

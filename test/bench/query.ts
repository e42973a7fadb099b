import { Kysely, sql } from "kysely";
import { createAppDatabase } from "../../kernel/db/database.js";
import { createMigrator } from "../../kernel/db/migrations.js";
import { schema, timestamps } from "../../kernel/schema/index.js";
import { openDatabase } from "../support/databases.js";
import { compare, print } from "./measure.js";

/**
 * `query.post.findMany({ take: 50, include: { author: true } })` on in-memory PGlite (10,000 posts,
 * 500 authors) against the hand-written Kysely a careful developer would write: the page, then the
 * authors in one batched `WHERE id IN (...)` statement.
 */

const model = schema("1")
  .table("user", (t) => ({ id: t.serial().primaryKey(), name: t.text(), email: t.text().unique(), ...timestamps(t) }))
  .table("post", (t) => ({
    id: t.serial().primaryKey(),
    title: t.text(),
    body: t.text().nullable(),
    authorId: t.integer().references("user", "id").index(),
    ...timestamps(t),
  }))
  .relation("post", (rel) => ({ author: rel.belongsTo("user", { from: "authorId", to: "id" }) }))
  .build();

export async function run(): Promise<void> {
  const database = await openDatabase("pglite");
  let statements = 0;
  const kysely = new Kysely<any>({ dialect: database.dialect, log: (event) => void (event.level === "query" && statements++) });
  const { error } = await createMigrator(kysely, database.kind, [model]).migrateToLatest();
  if (error) throw error;
  await sql`insert into "user" (name, email) select 'user ' || i, 'user' || i || '@example.com' from generate_series(1, 500) as i`.execute(kysely);
  await sql`insert into post (title, body, "authorId") select 'post ' || i, repeat('text ', 20), 1 + (i % 500) from generate_series(1, 10000) as i`.execute(kysely);
  const db = createAppDatabase(kysely, database.kind, model);

  const trellis = () => db.query.post.findMany({ take: 50, include: { author: true } });
  const baseline = async () => {
    const posts = await kysely.selectFrom("post").selectAll().orderBy("id").limit(50).execute();
    const ids = [...new Set(posts.map((post) => post.authorId))];
    const authors = ids.length ? await kysely.selectFrom("user").selectAll().where("id", "in", ids).execute() : [];
    const byId = new Map(authors.map((author) => [author.id, author]));
    return posts.map((post) => ({ ...post, author: byId.get(post.authorId) ?? null }));
  };

  const ours = await trellis();
  const theirs = await baseline();
  if (JSON.stringify(ours) !== JSON.stringify(theirs)) throw new Error("findMany and the baseline disagree");
  const perCall = async (op: () => Promise<unknown>) => {
    statements = 0;
    await op();
    return statements;
  };
  const counts = { trellis: await perCall(trellis), baseline: await perCall(baseline) };

  const stats = await compare(
    [
      { name: "Kysely page + batched IN (baseline)", op: baseline },
      { name: "query.post.findMany include author", op: trellis },
    ],
    { warmup: 200, count: 2000 },
  );
  print("50 posts + their authors on PGlite (10,000 posts, 500 users)", stats, {
    of: "query.post.findMany include author",
    to: "Kysely page + batched IN (baseline)",
    target: 1.0,
  });
  console.log(`  SQL statements per call: findMany ${counts.trellis}, baseline ${counts.baseline}`);

  // Page 500 of 10,000 rows (20 a page): keyset cursor against skip, and the cursor's first page for flatness.
  const size = 20;
  const cursorAt = async (page: number) => (await db.query.post.findPage({ take: size, skip: (page - 1) * size })).nextCursor!;
  const [at2, at500] = [await cursorAt(1), await cursorAt(499)];
  const byCursor = (after: string) => () => db.query.post.findPage({ take: size, after });
  const bySkip = () => db.query.post.findMany({ take: size, skip: 499 * size });
  const [cursorPage, skipPage] = [(await byCursor(at500)()).items, await bySkip()];
  if (JSON.stringify(cursorPage) !== JSON.stringify(skipPage) || cursorPage.length !== size) throw new Error("cursor and skip pages disagree");
  const pages = await compare(
    [
      { name: "findMany skip 9,980 (page 500)", op: bySkip },
      { name: "findPage after cursor (page 2)", op: byCursor(at2) },
      { name: "findPage after cursor (page 500)", op: byCursor(at500) },
    ],
    { warmup: 100, count: 1000 },
  );
  print("page 500 of 10,000 posts on PGlite, 20 a page", pages, { of: "findPage after cursor (page 500)", to: "findMany skip 9,980 (page 500)", target: 10 });
  await kysely.destroy();
  await database.close();
  // Full-text search against ILIKE on 100,000 rows, on a database of its own.
  await (await import("./query-search.js")).run();
  await vectors();
}

/**
 * `nearest` top-10 over 10,000 rows of 384 dimensions (random unit-ish vectors), exact (no index,
 * a sequential scan) against the HNSW index (approximate; iterative scans on). Also reports the
 * index's recall of the exact top 10.
 */
export async function vectors(): Promise<void> {
  const dims = 384;
  const tables = (index: boolean) =>
    schema("1")
      .table("plain", (t) => ({ id: t.serial().primaryKey(), embedding: t.vector(dims) }))
      .table("indexed", (t) => ({ id: t.serial().primaryKey(), embedding: index ? t.vector(dims).index() : t.vector(dims) }))
      .build();
  const model = tables(true);
  const database = await openDatabase("pglite");
  const kysely = new Kysely<any>({ dialect: database.dialect });
  // The rows first, the index after: how a real table gets one, and far faster to build.
  const { error } = await createMigrator(kysely, database.kind, [tables(false)]).migrateToLatest();
  if (error) throw error;
  await sql`insert into plain (embedding) select (select array_agg(random() - 0.5) from generate_series(1, ${dims}) where i > 0)::vector from generate_series(1, 10000) as i`.execute(kysely);
  await sql`insert into indexed (embedding) select embedding from plain order by id`.execute(kysely);
  const started = performance.now();
  await sql.raw(`create index "indexed_embedding_idx" on "indexed" using hnsw ("embedding" vector_cosine_ops)`).execute(kysely);
  const built = performance.now() - started;
  const db = createAppDatabase(kysely, database.kind, model);
  const probes = Array.from({ length: 50 }, () => Array.from({ length: dims }, () => Math.random() - 0.5));
  let turn = 0;
  const search = (table: "plain" | "indexed") => () => db.query[table].findMany({ nearest: { column: "embedding", vector: probes[turn++ % probes.length]!, k: 10 } });
  let found = 0;
  for (const vector of probes) {
    const exact = new Set((await db.query.plain.findMany({ nearest: { column: "embedding", vector, k: 10 } })).map((row) => row.id));
    found += (await db.query.indexed.findMany({ nearest: { column: "embedding", vector, k: 10 } })).filter((row) => exact.has(row.id)).length;
  }
  const stats = await compare(
    [
      { name: "nearest top-10, no index (exact)", op: search("plain") },
      { name: "nearest top-10, HNSW index", op: search("indexed") },
    ],
    { warmup: 20, count: 200 },
  );
  print("vector top-10 of 10,000 rows x 384 dimensions on PGlite (cosine)", stats, { of: "nearest top-10, HNSW index", to: "nearest top-10, no index (exact)", target: 1 });
  console.log(`  HNSW index build ${Math.round(built)} ms; recall of the exact top 10: ${((found / (probes.length * 10)) * 100).toFixed(1)}%`);
  await kysely.destroy();
  await database.close();
}

// Run directly: `npx tsx test/bench/query.ts`.
if (import.meta.url === `file://${process.argv[1]}`) await run();

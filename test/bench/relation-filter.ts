import { Kysely, sql } from "kysely";
import { createAppDatabase } from "../../kernel/db/database.js";
import { createMigrator } from "../../kernel/db/migrations.js";
import { schema } from "../../kernel/schema/index.js";
import { openDatabase } from "../support/databases.js";
import { compare, print } from "./measure.js";

/**
 * A relation filter against the join a careful developer writes by hand: "the first 50 tasks
 * assigned to this user", `query.task.findMany({ where: { assignees: { some: { userId } } } })` (an
 * EXISTS subquery) against Kysely's `innerJoin` on the assignee table, on in-memory PGlite with
 * 10,000 tasks, 30,000 assignments and 500 users (each task's assignees distinct, so the join needs
 * no DISTINCT and both answer the same rows).
 */

const model = schema("1")
  .table("task", (t) => ({ id: t.serial().primaryKey(), title: t.text(), done: t.boolean().default(false) }))
  .table("assignee", (t) => ({ id: t.serial().primaryKey(), taskId: t.integer().references("task", "id").index(), userId: t.integer().index() }))
  .relation("task", (rel) => ({ assignees: rel.hasMany("assignee", { from: "id", to: "taskId" }) }))
  .build();

export async function run(): Promise<void> {
  const database = await openDatabase("pglite");
  const kysely = new Kysely<any>({ dialect: database.dialect });
  const { error } = await createMigrator(kysely, database.kind, [model]).migrateToLatest();
  if (error) throw error;
  await sql`insert into task (title) select 'task ' || i from generate_series(1, 10000) as i`.execute(kysely);
  // Three distinct users per task: (i, i + 167, i + 334) modulo 500.
  await sql`insert into assignee ("taskId", "userId") select t, ((t * 7 + k * 167) % 500) from generate_series(1, 10000) as t, generate_series(0, 2) as k`.execute(kysely);
  await sql`analyze`.execute(kysely);
  const db = createAppDatabase(kysely, database.kind, model);

  let turn = 0;
  const user = () => turn++ % 500;
  const trellis = (userId = user()) => db.query.task.findMany({ where: { assignees: { some: { userId } } }, take: 50 });
  const baseline = (userId = user()) =>
    kysely.selectFrom("task").innerJoin("assignee", "assignee.taskId", "task.id").where("assignee.userId", "=", userId).selectAll("task").orderBy("task.id").limit(50).execute();

  for (const userId of [0, 42, 499]) {
    if (JSON.stringify(await trellis(userId)) !== JSON.stringify(await baseline(userId))) throw new Error(`the relation filter and the join disagree for user ${userId}`);
  }
  const stats = await compare(
    [
      { name: "Kysely inner join (baseline)", op: () => baseline() },
      { name: "findMany where assignees some", op: () => trellis() },
    ],
    { warmup: 200, count: 2000 },
  );
  print("50 tasks assigned to a user on PGlite (10,000 tasks, 30,000 assignments)", stats, {
    of: "findMany where assignees some",
    to: "Kysely inner join (baseline)",
    target: 0.9,
  });
  await kysely.destroy();
  await database.close();
}

// Run directly: `npx tsx test/bench/relation-filter.ts`.
if (import.meta.url === `file://${process.argv[1]}`) await run();

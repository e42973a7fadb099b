import { sql } from "kysely";
import { openDatabase } from "../support/databases.js";
import { signUp } from "../support/auth.js";
import { adminApp } from "../admin/fixture.js";
import { compare, print } from "./measure.js";

/**
 * `_admin.data.list` of 50 rows against the resource's `post.list` of the same 50 rows, both over
 * `/rpc` through `handle()`, both with the admin's session cookie, on in-memory PGlite with 10,000
 * posts. The admin call also counts the matching rows (`{ data, count }`), so the target is 0.8.
 * Counts are remembered per table and `where` until the table changes (what a dashboard paging
 * through a table does); the third line shows the cost when every call has to count.
 */
export async function run(): Promise<void> {
  const database = await openDatabase("pglite");
  const app = await adminApp({ dialect: database.dialect, kind: database.kind }).start();
  const admin = await signUp(app, "bench-admin@example.test");
  await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", admin.userId).execute();
  await sql`insert into post (title, body, views) select 'post ' || i, repeat('text ', 20), i from generate_series(1, 10000) as i`.execute(app.db);

  const call = (path: string, input: unknown) => async () => {
    const response = await app.handle(
      new Request(`http://localhost/rpc/${path}`, { method: "POST", headers: { "content-type": "application/json", cookie: admin.cookie }, body: JSON.stringify({ json: input }) }),
    );
    if (response.status !== 200) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  const resource = call("post/list", { take: 50 });
  const adminList = call("_admin/data/list", { table: "post", take: 50 });
  // A different `where` on every call (matching every row), so the count is never remembered.
  let n = 0;
  const uncounted = () => call("_admin/data/list", { table: "post", take: 50, where: { id: { not: -++n } } })();
  const [a, b] = [(await resource()) as any, (await adminList()) as any];
  if (JSON.stringify(a.json) !== JSON.stringify(b.json.data)) throw new Error("post.list and _admin.data.list disagree");

  const stats = await compare(
    [
      { name: "post.list take 50 (resource)", op: resource },
      { name: "_admin.data.list take 50 (+ count)", op: adminList },
      { name: "_admin.data.list, count never remembered", op: uncounted },
    ],
    { warmup: 50, count: 300, rounds: 5 },
  );
  print("50 posts through the admin API and through the resource (PGlite, 10,000 posts, signed in)", stats, {
    of: "_admin.data.list take 50 (+ count)",
    to: "post.list take 50 (resource)",
    target: 0.8,
  });
  await app.close();
  await database.close();
}

// Run directly: `npx tsx test/bench/admin.ts`.
if (import.meta.url === `file://${process.argv[1]}`) await run();

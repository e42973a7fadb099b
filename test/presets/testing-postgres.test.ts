import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { App } from "trellis";
import { schema } from "trellis/schema";
import { testApp, type TestAppInput } from "trellis/testing";

/**
 * `testApp(create, { databaseUrl })`: each test gets a PostgreSQL database of its own, copied from
 * its schema's migrated template, and dropped when it closes. The schema carries a random table
 * name, so this file makes its own template (and drops it after) whatever earlier runs left.
 */
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) console.log("skipping the test kit on PostgreSQL: DATABASE_URL is not set");

const table = `kit_note_${randomBytes(4).toString("hex")}`;
const v1 = schema("1")
  .auth()
  .table(table, (t) => ({ id: t.serial().primaryKey(), body: t.text() }))
  .build();

let built = 0;
function createApp({ db, secret }: TestAppInput) {
  built++;
  return new App({ name: "kit", baseUrl: "http://localhost:3000", db })
    .schema(v1)
    .auth({ secret, emailAndPassword: { enabled: true } })
    .procedure("add", (base) => base.input(z.object({ body: z.string() })).handler(async ({ input, context }) => {
      await context.db.insertInto(table as never).values(input as never).execute();
      return null;
    }))
    .procedure("where", (base) => base.handler(async ({ context }) => {
      const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(context.db);
      const count = await context.db.selectFrom(table as never).select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
      return { database: rows[0]!.name, rows: Number((count as { n: number }).n) };
    }));
}

async function databases(pattern: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<{ datname: string }>("select datname from pg_database where datname like $1 order by datname", [pattern])).rows.map((row) => row.datname);
  } finally {
    await client.end();
  }
}

describe.runIf(databaseUrl)("trellis/testing on PostgreSQL (databaseUrl)", () => {
  let template: string | undefined;
  afterAll(async () => {
    if (!template) return;
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query(`drop database if exists ${template} with (force)`).finally(() => client.end());
  });

  it("gives each test a database of its own, migrated, copied from one template, and drops it at close", { timeout: 120_000 }, async () => {
    const before = new Set(await databases("trellis_tpl_%"));
    const first = await testApp(createApp, { databaseUrl });
    const user = await first.signUp({ email: "ada@example.com" });
    await user.client.add({ body: "written by the first test" });
    const one = await user.client.where();
    expect(one.rows).toBe(1);
    expect(one.database).toMatch(/^trellis_test_\d+_[0-9a-f]{8}$/);
    // The template is new (its schema names a table no earlier run had): one more trellis_tpl_ database.
    const made = (await databases("trellis_tpl_%")).filter((name) => !before.has(name));
    expect(made).toHaveLength(1);
    template = made[0];
    // The test's app, and one more to migrate the template.
    expect(built).toBe(2);
    await first.close();
    expect(await databases(one.database)).toEqual([]);

    // The next test: a new database, from the same template, without the first test's row or user.
    const second = await testApp(createApp, { databaseUrl });
    try {
      expect(built).toBe(3);
      const again = await second.signUp({ email: "ada@example.com" });
      const two = await again.client.where();
      expect(two.database).not.toBe(one.database);
      expect(two.rows).toBe(0);
      expect((await databases("trellis_tpl_%")).filter((name) => !before.has(name))).toEqual([template]);
    } finally {
      await second.close();
    }
  });

  it("runs parallel tests on separate databases", { timeout: 120_000 }, async () => {
    const apps = await Promise.all([testApp(createApp, { databaseUrl }), testApp(createApp, { databaseUrl })]);
    try {
      const [a, b] = await Promise.all(apps.map((app, index) => app.signUp({ email: `user${index}@example.com` })));
      await a!.client.add({ body: "only in a" });
      const [seenByA, seenByB] = await Promise.all([a!.client.where(), b!.client.where()]);
      expect(seenByA.rows).toBe(1);
      expect(seenByB.rows).toBe(0);
      expect(seenByA.database).not.toBe(seenByB.database);
    } finally {
      await Promise.all(apps.map((app) => app.close()));
    }
  });
});

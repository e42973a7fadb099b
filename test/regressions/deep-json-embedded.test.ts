import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { embedded } from "../../kernel/embedded/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { rpc } from "../support/app.js";

/**
 * A procedure with a loose schema (`z.unknown()`) passed an object nested about 2,000 levels deep
 * to `context.jobs.send` (200). When the worker read the job, the embedded database's thread could
 * not hand the row over, its answer was lost, the single connection stayed held: every later query
 * waited forever and `close()` hung. JSON bound for the database is now refused past 64 levels
 * (400 naming the limit) on every path, and a result the thread cannot hand over is an error.
 */
const v1 = schema("1").table("doc", (t) => ({ id: t.serial().primaryKey(), meta: t.jsonb().nullable() })).build();

function nested(levels: number): unknown {
  let value: unknown = { leaf: true };
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

describe("JSON nested 2,000 levels deep on the embedded database", () => {
  let built: any;
  const ran: unknown[] = [];
  beforeAll(async () => {
    built = await new App({ db: embedded({ dataDir: "memory://" }), onError: () => undefined })
      .schema(v1)
      .jobs({ pollingInterval: 0.5 })
      .job("keep", {}, ({ data }) => void ran.push(data))
      .procedure("deep.job", (base) => base.input(z.unknown()).handler(async ({ input, context }) => ({ id: await context.jobs!.send("keep", input) })))
      .procedure("deep.insert", (base) =>
        base.input(z.unknown()).handler(async ({ input, context }) => {
          await context.db.insertInto("doc").values({ meta: input as never }).execute();
          return { ok: true };
        }),
      )
      .procedure("deep.stored", (base) =>
        // Written as JSON text (no object for the dialect to check), as raw SQL or another process could.
        base.input(z.object({ levels: z.number() })).handler(async ({ input, context }) => {
          await sql`insert into doc (meta) values (${JSON.stringify(nested(input.levels))}::jsonb)`.execute(context.db);
          return { rows: (await context.db.selectFrom("doc").select("id").execute()).length, read: (await context.db.selectFrom("doc").select("meta").execute()).length };
        }),
      )
      .procedure("ping", (base) => base.handler(async ({ context }) => ({ docs: Number((await context.db.selectFrom("doc").select((eb) => eb.fn.countAll().as("n")).executeTakeFirstOrThrow()).n) })))
      .start();
  }, 90_000);
  afterAll(async () => {
    await built?.close();
  });

  it("refuses it for a job (400 naming the limit), on a jsonb insert from a procedure, and stays responsive", { timeout: 60_000 }, async () => {
    const job = await rpc(built, "deep.job", nested(2000));
    expect(job.status).toBe(400);
    expect(job.body.message).toBe('send("keep"): the job\'s data is nested more than 64 levels deep');
    const insert = await rpc(built, "deep.insert", nested(2000));
    expect(insert.status).toBe(400);
    expect(insert.body.message).toContain("nested more than 64 levels deep");
    // Within the limit, both work.
    expect((await rpc(built, "deep.job", nested(60))).status).toBe(200);
    expect((await rpc(built, "deep.insert", nested(60))).status).toBe(200);
    expect((await rpc(built, "ping")).body).toEqual({ docs: 1 });
  });

  it("a stored value too deep to read is an error, not a hang; the next query and close() answer", { timeout: 60_000 }, async () => {
    const began = Date.now();
    const read = await rpc(built, "deep.stored", { levels: 2000 });
    expect(read.status).toBe(500);
    expect(Date.now() - began).toBeLessThan(10_000);
    expect((await rpc(built, "ping")).status).toBe(200);
    const closing = Date.now();
    await built.close();
    expect(Date.now() - closing).toBeLessThan(10_000);
    built = undefined;
  });

  it("a statement past statementTimeoutMs fails with EMBEDDED_STATEMENT_TIMEOUT; the database answers again after it", { timeout: 60_000 }, async () => {
    const db = embedded({ dataDir: "memory://", statementTimeoutMs: 1_500 });
    try {
      await db.ready();
      const began = Date.now();
      await expect(db.client.query("select pg_sleep(2.5)")).rejects.toMatchObject({ code: "EMBEDDED_STATEMENT_TIMEOUT" });
      expect(Date.now() - began).toBeLessThan(2_400);
      // Sent while the sleep still runs on the thread: it waits there for it, within its own bound.
      await expect(db.client.query("select 1 as one")).resolves.toMatchObject({ rows: [{ one: 1 }] });
    } finally {
      await db.close();
    }
  });
});

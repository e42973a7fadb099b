/**
 * `npm run bench -- rows`: less work per row and per statement.
 * - Encoding 50 resource rows for the RPC wire: oRPC's generic serializer against the encoder
 *   compiled from the table (kernel/wire/row-encoder.ts), each followed by the JSON.stringify the
 *   response does; the two outputs are checked equal first.
 * - One statement on in-thread PGlite: `pglite.query()` (unnamed: parse, describe, bind, describe,
 *   execute, sync, planned each time) against the named prepared statement (bind, execute, sync).
 */
import { StandardRPCJsonSerializer, StandardRPCSerializer } from "@orpc/client/standard";
import { openInstance } from "../../kernel/embedded/instance.js";
import { canPrepare, PreparedStatements } from "../../kernel/db/dialect/pglite-prepared.js";
import { schema, timestamps } from "../../kernel/schema/index.js";
import { customJsonSerializers } from "../../kernel/wire/custom-json.js";
import { compileRowEncoder, markedEncoder } from "../../kernel/wire/row-encoder.js";
import { compare, print } from "./measure.js";

const model = schema("1")
  .table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text(), body: t.text(), authorId: t.text().nullable(), views: t.integer(), ...timestamps(t) }))
  .build();

export async function run(): Promise<void> {
  await encodeRows();
  await statements();
}

/** 50 rows of a post table (two timestamp columns) through the generic and the compiled encoder. */
export async function encodeRows(): Promise<void> {
  const json = new StandardRPCJsonSerializer({ customJsonSerializers: [...customJsonSerializers] });
  const generic = new StandardRPCSerializer(json);
  const encoder = compileRowEncoder(model.tables.post!);
  const at = new Date("2026-11-25T10:00:00.000Z");
  const rows = () =>
    Array.from({ length: 50 }, (_, i) => ({ id: i + 1, title: `post ${i + 1}`, body: "text ".repeat(20), authorId: null, views: i, createdAt: at, updatedAt: at }));
  const compiled = (value: object[]) => {
    const sink = { meta: [] as [number, ...(string | number)[]][], maps: [], blobs: [], generic: json };
    const out = markedEncoder(value)!(value, sink);
    return JSON.stringify({ json: out, meta: sink.meta.length ? sink.meta : undefined });
  };
  const sample = rows();
  if (compiled(encoder.many(sample)) !== JSON.stringify(generic.serialize(sample))) throw new Error("compiled and generic encodings differ");
  // Fresh rows per call, as each answer's are; marking them is part of the compiled path's cost.
  const stats = await compare(
    [
      { name: "oRPC generic serializer + stringify", op: async () => JSON.stringify(generic.serialize(rows())) },
      { name: "compiled row encoder + stringify", op: async () => compiled(encoder.many(rows())) },
    ],
    { rounds: 5, warmup: 500, count: 5000 },
  );
  print("Encoding 50 rows for the RPC wire (in-process, best of 5 alternating rounds)", stats, {
    of: "compiled row encoder + stringify",
    to: "oRPC generic serializer + stringify",
    target: 1.0,
  });
}

/** Unnamed against named prepared statements on one in-thread PGlite with 10,000 posts. */
export async function statements(): Promise<void> {
  const { client, started } = openInstance("memory://", "16MB");
  await started;
  await client.exec(`create table post (id serial primary key, title text not null, body text not null, "authorId" text)`);
  await client.exec(`insert into post (title, body) select 'post ' || i, repeat('text ', 20) from generate_series(1, 10000) as i`);
  if (!canPrepare(client)) throw new Error("PGlite offers no protocol entry point");
  const prepared = new PreparedStatements(client);
  const cases = [
    { label: "get by key", sql: `select "id", "title", "body", "authorId" from "post" where "id" = $1`, params: [42] },
    { label: "list 20", sql: `select "id", "title", "body", "authorId" from "post" order by "id" limit $1`, params: [20] },
  ];
  for (const { label, sql, params } of cases) {
    const [a, b] = [await client.query(sql, params), await prepared.query(sql, params)];
    if (JSON.stringify(a.rows) !== JSON.stringify(b.rows)) throw new Error(`${label}: prepared and unnamed answers differ`);
    const stats = await compare(
      [
        { name: `${label}: pglite.query() (unnamed)`, op: () => client.query(sql, params) },
        { name: `${label}: named prepared statement`, op: () => prepared.query(sql, params) },
      ],
      { rounds: 3, warmup: 300, count: 2000 },
    );
    print(`One statement on in-thread PGlite, 10,000 rows: ${label} (best of 3 alternating rounds)`, stats, {
      of: `${label}: named prepared statement`,
      to: `${label}: pglite.query() (unnamed)`,
      target: 1.0,
    });
  }
  await client.close();
}

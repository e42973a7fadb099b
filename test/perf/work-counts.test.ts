/**
 * The hot path guarded by counting work, not time: a change that adds a statement, a transaction,
 * or a copy of the request to a resource action fails here, whatever the machine's speed.
 */
import { CompiledQuery, sql, type DatabaseConnection, type Dialect, type Driver, type QueryResult } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresDialect } from "../../kernel/db/dialect/postgres.js";
import { definePlugin } from "../../kernel/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { rpc } from "../support/app.js";
import { families, openDatabase, type Family, type TestDatabase } from "../support/databases.js";

/** Wraps a dialect so every statement sent to the database is recorded (BEGIN and COMMIT included). */
function counting(inner: Dialect, log: string[]): Dialect {
  const wrapConnection = (connection: DatabaseConnection): DatabaseConnection => ({
    executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
      log.push(query.sql.split(/\s+/)[0]!.toLowerCase());
      return connection.executeQuery<R>(query);
    },
    streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize),
  });
  const connections = new WeakMap<DatabaseConnection, DatabaseConnection>();
  return {
    createAdapter: () => inner.createAdapter(),
    createIntrospector: (db) => inner.createIntrospector(db),
    createQueryCompiler: () => inner.createQueryCompiler(),
    createDriver(): Driver {
      const driver = inner.createDriver();
      const unwrap = (connection: DatabaseConnection) => connections.get(connection) ?? connection;
      return {
        init: () => driver.init(),
        destroy: () => driver.destroy(),
        async acquireConnection() {
          const connection = await driver.acquireConnection();
          const wrapped = wrapConnection(connection);
          connections.set(wrapped, connection);
          return wrapped;
        },
        releaseConnection: (connection) => driver.releaseConnection(unwrap(connection)),
        beginTransaction: (connection, settings) => (log.push("begin"), driver.beginTransaction(unwrap(connection), settings)),
        commitTransaction: (connection) => (log.push("commit"), driver.commitTransaction(unwrap(connection))),
        rollbackTransaction: (connection) => (log.push("rollback"), driver.rollbackTransaction(unwrap(connection))),
      };
    },
  };
}

const v1 = schema("1").table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text(), authorId: t.text().nullable() })).build();

describe.each<Family>(["pglite", "sqlite"])("statements per resource action on %s", (family) => {
  const log: string[] = [];
  const middlewareCalls = { count: 0 };
  let database: TestDatabase;
  let built: any;

  beforeAll(async () => {
    database = await openDatabase(family);
    const counter = definePlugin({
      name: "counter",
      build: () => ({ middleware: [(event, next) => (middlewareCalls.count++, next())] }),
    });
    built = new App({ db: { dialect: counting(database.dialect, log), kind: database.kind } }).schema(v1).resource("post").use(counter).build();
    await built.migrator.migrateToLatest();
  });
  afterAll(async () => {
    await built.close();
    await database.close();
  });

  const statementsOf = async (name: string, input: unknown) => {
    log.length = 0;
    const before = middlewareCalls.count;
    const result = await rpc(built, name, input);
    expect(result.status).toBe(200);
    expect(middlewareCalls.count - before).toBe(1);
    return [...log];
  };

  it("create, get, update, delete and list are one statement each, with no transaction", async () => {
    expect(await statementsOf("post.create", { title: "a" })).toEqual(["insert"]);
    expect(await statementsOf("post.get", { where: { id: 1 } })).toEqual(["select"]);
    expect(await statementsOf("post.update", { where: { id: 1 }, data: { title: "b" } })).toEqual(["update"]);
    expect(await statementsOf("post.list", { take: 20 })).toEqual(["select"]);
    expect(await statementsOf("post.delete", { where: { id: 1 } })).toEqual(["delete"]);
  });

  it("an anonymous request resolves no session and builds no extra statement for /health", async () => {
    log.length = 0;
    const response = await built.handle(new Request("http://localhost/health"));
    expect(response.status).toBe(200);
    expect(log).toEqual(["select"]);
  });
});

/**
 * Each statement text is prepared once per connection and reused: the generated actions compile to
 * a few statement shapes, so repeating them adds no prepared statement. PostgreSQL's own view of the
 * session (`pg_prepared_statements`) is the count; sequential requests reuse one pooled connection.
 */
describe.each<Family>(families().filter((family) => family !== "sqlite"))("prepared statements per statement shape on %s", (family) => {
  let database: TestDatabase;
  let built: any;

  beforeAll(async () => {
    database = await openDatabase(family);
    built = new App({ db: { dialect: database.dialect, kind: database.kind } }).schema(v1).resource("post").build();
    await built.migrator.migrateToLatest();
  });
  afterAll(async () => {
    await built.close();
    await database.close();
  });

  const prepared = async (): Promise<string[]> =>
    (await sql<{ statement: string }>`select statement from pg_prepared_statements order by statement`.execute(built.db)).rows.map((row) => row.statement);

  const actions = async (id: number) => {
    expect((await rpc(built, "post.create", { title: `t${id}` })).status).toBe(200);
    expect((await rpc(built, "post.get", { where: { id } })).status).toBe(200);
    expect((await rpc(built, "post.update", { where: { id }, data: { title: "u" } })).status).toBe(200);
    expect((await rpc(built, "post.list", { take: 20 })).status).toBe(200);
  };

  it("prepares each action's statement once and reuses it", async () => {
    await actions(1);
    const once = await prepared();
    // The four actions' statements are among them, each text once.
    for (const verb of ["insert into \"post\"", "select", "update \"post\""]) expect(once.some((text) => text.startsWith(verb)), verb).toBe(true);
    expect(new Set(once).size).toBe(once.length);
    for (const id of [2, 3, 4]) await actions(id);
    expect(await prepared()).toEqual(once);
  });
});

describe.runIf(families().includes("postgres"))("prepared statements turned off on PostgreSQL", () => {
  it("sends every statement unnamed with preparedStatements: false", async () => {
    const database = await openDatabase("postgres");
    const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 1, options: `-c search_path=${database.schema}` });
    const built: any = new App({ db: { dialect: postgresDialect({ pool, preparedStatements: false }), kind: "postgres" } }).schema(v1).resource("post").build();
    try {
      await built.migrator.migrateToLatest();
      expect((await rpc(built, "post.create", { title: "a" })).status).toBe(200);
      expect((await rpc(built, "post.get", { where: { id: 1 } })).status).toBe(200);
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements`.execute(built.db);
      expect(rows[0]!.n).toBe(0);
    } finally {
      await built.close();
      await database.close();
    }
  });
});

// The app `npm run bench -- runtimes` serves on Node, Bun and Deno (and the runtime suites start, to
// see SQLite refused): the built package (dist/), as an installed trellis runs, with sign-up, a live
// resource and files. Plain JavaScript, so every runtime runs it
// as is. Usage: <runtime> smoke-app.mjs <node|bun|deno>; PORT, APP_BASE_URL and DATA_DIR (the
// embedded database's directory) or DATABASE_URL (PostgreSQL) from the environment.
const runtime = process.argv[2] ?? "node";
const dist = new URL("../../dist/", import.meta.url);
const load = (name) => import(new URL(`${name}.js`, dist).href);
const [{ App }, { embedded }, { schema, timestamps }, { memoryStorage }, { postgresDialect, postgresLive }, { serve }] = await Promise.all(
  ["index", "embedded", "schema", "storage", "db", runtime].map(load),
);

const v1 = schema("1")
  .auth()
  .files()
  .table("note", (t) => ({
    id: t.serial().primaryKey(),
    title: t.text(),
    ownerId: t.text().references("user", "id", { onDelete: "cascade" }),
    ...timestamps(t),
  }))
  .build();

const { DATABASE_URL, DATA_DIR, PORT, APP_BASE_URL, DB_KIND } = process.env;
const db =
  DB_KIND === "sqlite"
    ? { kind: "sqlite", dialect: (await load("db")).sqliteDialect({ filename: ":memory:" }) }
    : DATABASE_URL
      ? { kind: "postgres", dialect: postgresDialect({ connectionString: DATABASE_URL }), live: postgresLive({ connectionString: DATABASE_URL }) }
      : embedded({ dataDir: DATA_DIR });

const app = new App({ name: `Notes on ${runtime}`, baseUrl: APP_BASE_URL ?? "http://localhost:3000", db, storage: memoryStorage() })
  .schema(v1)
  .auth({ secret: "a-test-secret-of-forty-random-characters-0123", emailAndPassword: { enabled: true } })
  .resource("note", {
    ownerColumn: "ownerId",
    permissions: { list: "owner", get: "owner", create: "authenticated", update: "owner", delete: "owner" },
    live: true,
  })
  .files({ permissions: { upload: "authenticated", list: "owner", get: "owner", delete: "owner" } });

await serve(app, { port: Number(PORT ?? 3000), hostname: "127.0.0.1", banner: true });

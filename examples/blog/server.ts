import { createStorage } from "unstorage";
import fsDriver from "unstorage/drivers/fs";
import { embedded } from "trellis/embedded";
import { postgresDialect, postgresLive } from "trellis/db";
import { fromStore } from "trellis/storage";
import { serve } from "trellis/node";
import { createBlog } from "./app.js";

/**
 * `npm start`: the blog on PostgreSQL when `DATABASE_URL` is set, otherwise on the embedded
 * database in `DATA_DIR` (default `./.app/embedded`); images in `./.app/files`. Listens on
 * `HOST`:`PORT` (localhost:3000); `CORS_ORIGINS` lists the browser origins allowed to call it,
 * comma-separated.
 */
const { DATABASE_URL, DATA_DIR, HOST, PORT, CORS_ORIGINS } = process.env;
// The app is made inside serve(): a setting it refuses (a malformed DATABASE_URL, no AUTH_SECRET in
// production) is printed as one block with its fix, like a database that cannot be reached.
// serve() prints where it listens, with the database, schema version and surfaces.
await serve(
  () => {
    const db = DATABASE_URL
      ? {
          kind: "postgres" as const,
          dialect: postgresDialect({ connectionString: DATABASE_URL }),
          // post.live reaches writes from every replica through LISTEN/NOTIFY.
          live: postgresLive({ connectionString: DATABASE_URL }),
        }
      : embedded({ dataDir: DATA_DIR || undefined });
    const storage = fromStore(createStorage({ driver: fsDriver({ base: ".app/files" }) }));
    const cors = CORS_ORIGINS ? { origins: CORS_ORIGINS.split(",").map((origin) => origin.trim()) } : undefined;
    return createBlog(db, { storage, cors });
  },
  { hostname: HOST || "localhost", port: PORT ? Number(PORT) : 3000 },
);

import { createStorage } from "unstorage";
import fsDriver from "unstorage/drivers/fs";
import { embedded } from "trellis/embedded";
import { postgresDialect, postgresLive } from "trellis/db";
import { fromStore } from "trellis/storage";
import { createBlog } from "./app.js";

/**
 * The blog as `npm start` runs it, configured from the environment: PostgreSQL when `DATABASE_URL`
 * is set, otherwise the embedded database in `DATA_DIR` (default `./.app/embedded`); images in
 * `./.app/files`; `CORS_ORIGINS` lists the browser origins allowed to call it, comma-separated.
 * server.ts serves it, and the repository's trellis.config.ts hands it to the `trellis` command
 * (`db backup`, `admin create`, `doctor`, `migrate`), so both open the same database.
 */
export function blogFromEnv(env: NodeJS.ProcessEnv = process.env) {
  const { DATABASE_URL, DATA_DIR, CORS_ORIGINS } = env;
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
}

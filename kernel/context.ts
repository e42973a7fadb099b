import type { AppDatabase } from "./db/database.js";
import type { SessionUser, UserSession } from "./request/session.js";
import type { AppKV, AppSecrets, AppStorage } from "./contracts/resources.js";

/** What every procedure and route receives as `context`. */
export interface AppRpcContext<TDB = any> {
  /** The incoming request's headers (for `client()`, the headers it was given). */
  headers: Headers;
  /** The typed Kysely instance of the latest schema, plus `query` and `transact`. */
  db: AppDatabase<TDB>;
  /** The auth library instance; undefined without `.auth()`. */
  auth?: unknown;
  /** The signed-in user, or null. Resolved once per request; always null without `.auth()`. */
  user: SessionUser | null;
  session: UserSession | null;
  storage?: AppStorage;
  secrets?: AppSecrets;
  kv?: AppKV;
}

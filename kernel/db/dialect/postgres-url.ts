import { TrellisError } from "../../errors.js";

/** Where a PostgreSQL connection goes, for messages: never the password. */
export interface PostgresTarget {
  host: string;
  port: number;
  database: string;
  user?: string;
  /** The URL with its password replaced by `***` (or the parts, when there was no URL). */
  shown: string;
}

/** `postgres://user:secret@host/db` as `postgres://user:***@host/db`, even when it does not parse. */
export function hidePassword(url: string): string {
  return url.replace(/([^:/@\s]+):[^@/\s]*@/, "$1:***@");
}

/** Checks a connection string before anything connects; throws `DB_URL_INVALID` with the fix. */
export function parsePostgresUrl(connectionString: string): PostgresTarget {
  const shown = hidePassword(connectionString);
  const invalid = (why: string) =>
    new TrellisError("DB_URL_INVALID", `The PostgreSQL connection string ${JSON.stringify(shown)} (DATABASE_URL?) ${why}. Expected postgres://user:password@host:5432/database`);
  let url: URL;
  try {
    url = new URL(connectionString);
  } catch {
    throw invalid("is not a URL");
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") throw invalid(`has the scheme "${url.protocol.slice(0, -1)}", not postgres`);
  const socket = url.searchParams.get("host");
  if (!url.hostname && !socket) throw invalid("names no host");
  const port = url.port ? Number(url.port) : 5432;
  const database = decodeURIComponent(url.pathname.slice(1)) || decodeURIComponent(url.username) || "postgres";
  return { host: url.hostname || socket!, port, database, user: url.username ? decodeURIComponent(url.username) : undefined, shown };
}

const NETWORK = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ECONNRESET"]);

/**
 * A failed connect as an explained error: `DB_UNREACHABLE` (network, timeout), `DB_LOGIN_FAILED`
 * (password or role refused), `DB_NOT_FOUND` (no such database); anything else is left as it is.
 */
export function explainConnectError(error: unknown, target: PostgresTarget): unknown {
  const code = (error as { code?: unknown } | undefined)?.code;
  const reason = error instanceof Error ? error.message : String(error);
  const where = `PostgreSQL at ${target.host}:${target.port}, database "${target.database}"${target.user ? ` as "${target.user}"` : ""} (${target.shown})`;
  if ((typeof code === "string" && NETWORK.has(code)) || /timeout|Connection terminated/i.test(reason)) {
    return new TrellisError("DB_UNREACHABLE", `Cannot reach ${where}: ${reason}. Is the server running, and are the host and port in DATABASE_URL right?`, { cause: error });
  }
  if (code === "28P01" || code === "28000") {
    return new TrellisError("DB_LOGIN_FAILED", `${where} refused the login: ${reason}. Check the user and password in DATABASE_URL.`, { cause: error });
  }
  if (code === "3D000") {
    return new TrellisError("DB_NOT_FOUND", `${where}: ${reason}. Create it (createdb ${target.database}) or fix the database name in DATABASE_URL.`, { cause: error });
  }
  return error;
}

/**
 * How to hand a PostgreSQL URL to a client tool (`pg_dump`, `pg_restore`, `psql`) without its
 * password on the command line, where `ps` shows it to every user of the machine: the URL without
 * the password, and the environment with `PGPASSWORD` set from it (libpq reads it).
 */
export function pgClientEnv(url: string, env: NodeJS.ProcessEnv = process.env): { url: string; env: NodeJS.ProcessEnv } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { url, env }; // A keyword/value connection string: passed on as it is.
  }
  if (!parsed.password) return { url, env };
  const password = decodeURIComponent(parsed.password);
  parsed.password = "";
  return { url: parsed.toString(), env: { ...env, PGPASSWORD: password } };
}

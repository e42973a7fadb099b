import { RpcError, whereColumns, type TableModel } from "../../kernel/index.js";

/**
 * Columns whose values are credentials: never sent by the admin API, and never usable in a filter
 * or an ordering (either would let a caller probe a secret one character at a time).
 */
const SECRET_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  session: ["token"],
  account: ["password", "accessToken", "refreshToken", "idToken"],
  // The identifier carries the token of a reset or sign-in link (stored hashed by default, but an
  // integrator may store it plain, and rows written before that are plain).
  verification: ["identifier", "value"],
  apikey: ["key"],
  // Tables better-auth's own plugins bring, under the names those plugins give them.
  twoFactor: ["secret", "backupCodes"],
  jwks: ["privateKey"],
  oauthApplication: ["clientSecret"],
  oauthAccessToken: ["accessToken", "refreshToken"],
  deviceCode: ["deviceCode", "userCode"],
};

/** Tables the admin API never writes: credentials belong to the auth library. */
export const READ_ONLY_TABLES: ReadonlySet<string> = new Set(Object.keys(SECRET_COLUMNS));

/** What a redacted value reads as in every output. */
export const REDACTED = "[redacted]";

export function secretColumns(table: string): readonly string[] {
  return Object.hasOwn(SECRET_COLUMNS, table) ? SECRET_COLUMNS[table]! : [];
}

export function redact<T extends Record<string, unknown>>(table: string, row: T): T {
  const secrets = secretColumns(table);
  if (secrets.length === 0) return row;
  const out: Record<string, unknown> = { ...row };
  for (const column of secrets) if (column in out) out[column] = REDACTED;
  return out as T;
}

/** 400 when `where` names a secret column, under any boolean form (the kernel's one walk of `where`). */
export function refuseSecretFilter(table: string, where: unknown, path = "where"): void {
  const secrets = secretColumns(table);
  if (secrets.length === 0) return;
  const found = whereColumns(where, path).find((column) => secrets.includes(column.name));
  if (found) throw new RpcError("BAD_REQUEST", { message: `${found.path}: "${found.name}" is a secret column of "${table}" and cannot be filtered on` });
}

/**
 * 400 for a relation filter: the admin API filters a table by its own columns (a filter through a
 * relation would read another table's secrets, which `refuseSecretFilter` cannot see).
 */
export function refuseRelationFilter(model: TableModel, where: unknown, path = "where"): void {
  const found = whereColumns(where, path).find((column) => !Object.hasOwn(model.columns, column.name));
  if (found) throw new RpcError("BAD_REQUEST", { message: `${found.path}: unknown column "${found.name}" on table "${model.name}" (the admin API filters by columns only)` });
}

/** 400 when an ordering names a secret column. */
export function refuseSecretOrder(table: string, orderBy: readonly Record<string, unknown>[] | undefined): void {
  const secrets = secretColumns(table);
  for (const [i, entry] of (orderBy ?? []).entries()) {
    for (const key of Object.keys(entry)) {
      if (secrets.includes(key)) throw new RpcError("BAD_REQUEST", { message: `orderBy[${i}].${key}: "${key}" is a secret column of "${table}" and cannot be sorted on` });
    }
  }
}

/** 400 when a full-text search would match a secret column (a search is a filter on every indexed column). */
export function refuseSecretSearch(table: TableModel, search: string | undefined): void {
  if (search === undefined || !table.search) return;
  const found = Object.keys(table.search.columns).find((column) => secretColumns(table.name).includes(column));
  if (found) throw new RpcError("BAD_REQUEST", { message: `search: the full-text index of "${table.name}" holds the secret column "${found}", so it cannot be searched here` });
}

/** 400 when a nearest search names a secret column. */
export function refuseSecretNearest(table: string, column: string): void {
  if (secretColumns(table).includes(column)) throw new RpcError("BAD_REQUEST", { message: `nearest.column: "${column}" is a secret column of "${table}" and cannot be searched` });
}

/**
 * A caller's query arguments (`where`, `orderBy`, `take`, `skip`, `include`) that do not fit the
 * schema. It carries `status: 400` and the argument's `path` (`where.title.contains`,
 * `orderBy[1].createdAt`), which the RPC layer turns into a 400 `BAD_REQUEST` naming the field.
 */
export class QueryError extends Error {
  override readonly name: string = "QueryError";
  readonly status = 400 as const;
  readonly code = "BAD_REQUEST" as const;
  readonly path: string;

  constructor(path: string, reason: string) {
    super(`${path}: ${reason}`);
    this.path = path;
  }
}

/** A `where` that does not fit the table: unknown column or operator, or a value of the wrong type. */
export class WhereError extends QueryError {
  override readonly name: string = "WhereError";
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

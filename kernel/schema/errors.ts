/** Error codes of the schema builder; each names one rule a schema broke. */
export const SCHEMA_ERRORS = {
  /** `.build()` found one or more problems; `problems` lists each, naming its table and column. */
  INVALID: "SCHEMA_INVALID",
  /** A re-declaration changed a column that `.auth()` or `.files()` depends on. */
  CORE_COLUMN: "SCHEMA_CORE_COLUMN",
  /** A `.search()` call names a missing table, an unknown or non-text column, a bad weight or language. */
  SEARCH: "SCHEMA_SEARCH_INVALID",
} as const;

export type SchemaErrorCode = (typeof SCHEMA_ERRORS)[keyof typeof SCHEMA_ERRORS];

export class SchemaError extends Error {
  override readonly name = "SchemaError";
  readonly code: SchemaErrorCode;
  readonly problems: readonly string[];

  constructor(code: SchemaErrorCode, version: string, problems: readonly string[]) {
    const list = problems.length === 1 ? ` ${problems[0]}` : `\n${problems.map((p) => `  - ${p}`).join("\n")}`;
    super(`Schema "${version}":${list}`);
    this.code = code;
    this.problems = Object.freeze([...problems]);
  }
}

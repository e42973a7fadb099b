import { TrellisError } from "../errors.js";
import { WhereError } from "./query-error.js";

/**
 * Bounds on the work one query may ask for. Every value a caller's arguments bind counts (each
 * `in` item, each comparison and each text operand, in `where` and in every included relation's
 * `where` together), so one query binds at most `MAX_QUERY_VALUES` plus a handful of its own:
 * under SQLite's 32,766 and PostgreSQL's 65,535 parameters, so a 400 and never a refused statement.
 * A text match costs the stored text's length times the operand's on every row it reads (LIKE and
 * GLOB try each position), so the operands of `contains`/`startsWith`/`endsWith` are bounded each
 * and together.
 */
export interface QueryLimits {
  /**
   * Longest operand of `contains`, `startsWith` or `endsWith`, in characters; longer is 400.
   * @default 256
   */
  maxTextOperand?: number;
  /**
   * Characters of every `contains`/`startsWith`/`endsWith` operand of one query together; more is 400.
   * @default 512
   */
  maxTextOperands?: number;
  /**
   * Relation filters (`some`, `every`, `none`, `is`, `isNot`) in one query, rules' own included;
   * each is a correlated subquery evaluated per row, so more is 400.
   * @default 10
   */
  maxRelationFilters?: number;
  /**
   * How deep relation filters may nest (`{ tasks: { some: { assignees: { some: ... } } } }` is 2).
   * @default 3
   */
  maxRelationDepth?: number;
}

/** Values one query's arguments may bind (DESIGN.md section 5). */
export const MAX_QUERY_VALUES = 20_000;
/** Longest `in`/`notIn` list. */
export const MAX_IN_VALUES = 5000;
export const DEFAULT_QUERY_LIMITS: Required<QueryLimits> = Object.freeze({ maxTextOperand: 256, maxTextOperands: 512, maxRelationFilters: 10, maxRelationDepth: 3 });

/** What one query has spent so far: shared by its `where` and every include's `where`. */
export class QueryBudget {
  #values = 0;
  #text = 0;
  #relations = 0;

  constructor(readonly limits: Required<QueryLimits> = DEFAULT_QUERY_LIMITS) {}

  /** One more bound value; `root` names the argument in the message. */
  value(root: string): void {
    if (++this.#values > MAX_QUERY_VALUES) throw new WhereError(root, `at most ${MAX_QUERY_VALUES} values in one query`);
  }

  /**
   * One more relation filter at `path`, `depth` levels deep (1 at the top): counted like a value,
   * and against the relation limits. Returns its ordinal, which names the subquery's alias.
   */
  relation(path: string, root: string, depth: number): number {
    this.value(root);
    const { maxRelationFilters, maxRelationDepth } = this.limits;
    if (depth > maxRelationDepth) throw new WhereError(path, `relation filters may nest at most ${maxRelationDepth} levels deep`);
    if (++this.#relations > maxRelationFilters) throw new WhereError(path, `at most ${maxRelationFilters} relation filters in one query`);
    return this.#relations;
  }

  /** A text operand of `length` characters at `path`. */
  text(path: string, root: string, length: number): void {
    this.value(root);
    const { maxTextOperand, maxTextOperands } = this.limits;
    if (length > maxTextOperand) throw new WhereError(path, `at most ${maxTextOperand} characters (got ${length})`);
    this.#text += length;
    if (this.#text > maxTextOperands) throw new WhereError(path, `text operands of one query may total at most ${maxTextOperands} characters`);
  }
}

/** The defaults with `limits` over them; each must be a positive integer (checked once, at start). */
export function resolveQueryLimits(limits: QueryLimits = {}): Required<QueryLimits> {
  const out = { ...DEFAULT_QUERY_LIMITS };
  for (const [name, value] of Object.entries(limits) as [keyof QueryLimits, unknown][]) {
    if (value === undefined) continue;
    if (!(name in out)) throw new TrellisError("DB_QUERY_LIMITS", `Unknown query limit "${name}" (use ${Object.keys(out).join(", ")})`);
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) throw new TrellisError("DB_QUERY_LIMITS", `Query limit ${name} must be a positive integer, got ${String(value)}`);
    out[name] = value;
  }
  return Object.freeze(out);
}

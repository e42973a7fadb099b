import { z } from "zod";
import { MAX_SEARCH_CHARS } from "../../kernel/index.js";

/** The list, get, update and delete input shapes of a resource; column schemas come from the kernel. */

const include = z.record(z.string(), z.literal(true));

/**
 * A record of columns and operators, checked in full by the where compiler. zod drops an own
 * `__proto__` key from a record, which would silently widen the filter, so such a key is refused here.
 */
const where = z.preprocess((value, ctx) => {
  if (typeof value === "object" && value !== null && Object.hasOwn(value, "__proto__")) {
    ctx.addIssue({ code: "custom", message: 'unknown column "__proto__"' });
  }
  return value;
}, z.record(z.string(), z.unknown()));
const orderBy = z.array(z.record(z.string(), z.enum(["asc", "desc"])));
// The shape only: the column, the vector's length and k's bound are checked against the table.
const nearest = z.strictObject({ column: z.string(), vector: z.array(z.number()).max(16_000), k: z.number().int().min(1) });
export type NearestInput = z.infer<typeof nearest>;

export function listInput() {
  return z
    .object({
      where: where.optional(),
      orderBy: orderBy.optional(),
      take: z.number().int().min(0).optional(),
      skip: z.number().int().min(0).optional(),
      include: include.optional(),
      /** A previous page's `nextCursor` (`{name}.page`): only rows after it. */
      after: z.string().max(16_384).optional(),
      /** Words to find in the table's full-text index: best match first unless `orderBy` is given. */
      search: z.string().max(MAX_SEARCH_CHARS, `search must be at most ${MAX_SEARCH_CHARS} characters`).optional(),
      /** The k rows whose vector `column` is nearest `vector`, nearest first, each with `_distance`. */
      nearest: nearest.optional(),
    })
    .optional();
}

/** `{name}.batch`: creates, then updates, then deletes, each list at most `max` items. */
export function batchInput(create: z.ZodType, update: z.ZodType, remove: z.ZodType, max: number) {
  // One list over the limit is refused before its items are validated, with the message the
  // handler gives when the kinds together pass it.
  const items = (item: z.ZodType) =>
    z.array(item).max(max, { error: (issue) => `A batch holds at most ${max} items, got ${(issue.input as unknown[]).length}` }).optional();
  return z.object({ create: items(create), update: items(update), delete: items(remove) });
}

export function getInput(key: z.ZodObject) {
  return z.object({ where: key, include: include.optional() });
}

export function updateInput(key: z.ZodObject, data: z.ZodObject) {
  return z.object({ where: key, data });
}

export function deleteInput(key: z.ZodObject) {
  return z.object({ where: key });
}

/** `{name}.history`: the row, and a page of its entries (`cursor` a previous page's `nextCursor`). */
export function historyInput(key: z.ZodObject, max: number) {
  return z.object({
    where: key,
    cursor: z.string().regex(/^\d{1,19}$/, "a cursor is the nextCursor of a previous page").optional(),
    take: z.number().int().min(1).max(max).optional(),
  });
}

import type { RateLimitCharge } from "../../kernel/index.js";
import { RpcError, ValueError, attributeWrites, classifyDatabaseError, eventOf, type AppDatabase, type AppRpcContext, type ProcedureBase } from "../../kernel/index.js";
import type { z } from "zod";
import { assertGate } from "./permissions.js";
import { batchInput } from "./inputs.js";
import type { ResourceSpec, WriteScope } from "./procedures.js";
import { afterCommit } from "./hooks.js";

type Row = Record<string, unknown>;
type Write = "create" | "update" | "delete";
type Writer = (executor: AppDatabase<any>, input: any, context: AppRpcContext, scope: WriteScope) => Promise<Row>;

/** The order a batch runs in, and its answer's keys. */
const WRITES: readonly Write[] = ["create", "update", "delete"];

/**
 * `{name}.batch`: `{ create?, update?, delete? }`, run in one transaction (creates, then updates,
 * then deletes, each list in order), every item under its own action's permission and owner scope,
 * exactly as the single procedure would run it. The answer is `{ create, update, delete }`, the rows
 * as the single procedures answer them. The first refusal rolls the whole batch back and answers the
 * status the single action would have had, its message naming the item: `update[2]: No post matches`,
 * with `data: { action, index }`. At most `batchLimit` items in all (400 above). Under the rate limit
 * a batch of N items costs N counts, charged before anything runs (429 when over). Hooks fire once
 * per item: `before*` inside the batch's transaction, `after*` once it has committed.
 */
export function batchProcedure(
  spec: ResourceSpec,
  base: ProcedureBase<AppRpcContext>,
  db: AppDatabase<any>,
  rateLimit: RateLimitCharge | undefined,
  schemas: Record<Write, z.ZodType>,
  writers: Record<Write, Writer>,
  writeScope: (context: AppRpcContext) => WriteScope,
) {
  return base.input(batchInput(schemas.create, schemas.update, schemas.delete, spec.batchLimit)).handler(async ({ input, context }) => {
    const total = WRITES.reduce((sum, action) => sum + (input[action]?.length ?? 0), 0);
    if (total > spec.batchLimit) throw new RpcError("BAD_REQUEST", { message: `A batch holds at most ${spec.batchLimit} items, got ${total}` });
    // Each item is a call: the request counted one, the rest are charged before anything runs (429 over).
    await rateLimit?.charge(eventOf(context), total - 1);
    const scope = writeScope(context);
    const out = await attributeWrites({ table: spec.name, actor: scope.caller.actor, before: scope.before }, () =>
      db.transact(async (trx) => {
        const out: Record<Write, Row[]> = { create: [], update: [], delete: [] };
        for (const action of WRITES) {
          const items = (input[action] ?? []) as unknown[];
          for (let index = 0; index < items.length; index++) {
            try {
              out[action].push(await writers[action](trx, items[index], context, scope));
            } catch (error) {
              throw itemError(error, action, index);
            }
          }
        }
        return out;
      }),
    );
    await afterCommit(db, scope.after);
    return out;
  });
}

/**
 * The gates of the actions a batch names (401, then 403 for a missing role), read from the input
 * before it is validated, as every single procedure checks its gate before its input: a signed-out
 * caller learns it must sign in, not what the table's columns are. Input that names no action
 * (not an object, or empty lists) passes on to validation.
 */
export function assertBatchGates(permissions: ResourceSpec["permissions"], input: unknown, context: AppRpcContext): void {
  if (typeof input !== "object" || input === null) return;
  for (const action of WRITES) {
    const items = (input as Record<string, unknown>)[action];
    const permission = permissions[action];
    if (Array.isArray(items) && items.length > 0 && permission !== "public" && typeof permission !== "function") assertGate(permission, context);
  }
}

/** The single action's error, its message prefixed with the item; anything unexpected stays a 500. */
function itemError(error: unknown, action: Write, index: number): unknown {
  const name = `${action}[${index}]`;
  if (error instanceof RpcError) {
    return new RpcError(error.code, { status: error.status, message: `${name}: ${error.message}`, data: { action, index }, cause: error });
  }
  const known = classifyDatabaseError(error);
  if (known) return new RpcError(known.code, { status: known.status, message: `${name}: ${known.message}`, data: { ...known.data, action, index } });
  if (error instanceof ValueError || (error instanceof Error && (error as { status?: unknown }).status === 400)) {
    return new RpcError("BAD_REQUEST", { message: `${name}: ${error.message}`, data: { action, index } });
  }
  return error;
}

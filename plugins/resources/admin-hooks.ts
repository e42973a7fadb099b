import type { ResourceWriteHooks } from "../../kernel/index.js";
import type { BoundHooks } from "./hooks.js";

/** A resource's hooks as `_admin.data` runs them: the same hooks, the caller flagged as an admin write. */
export function adminHooks(hooks: BoundHooks): ResourceWriteHooks {
  return Object.freeze({
    has: hooks.has,
    beforeCreate: (trx, context, data) => hooks.beforeCreate(trx, hooks.caller(context, true), data),
    beforeUpdate: (trx, context, before, data) => hooks.beforeUpdate(trx, hooks.caller(context, true), before, data),
    beforeDelete: (trx, context, row) => hooks.beforeDelete(trx, hooks.caller(context, true), row),
    after: (hook, context, args) => hooks.after(hook, hooks.caller(context, true), args),
  } satisfies ResourceWriteHooks);
}

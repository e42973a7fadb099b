import { RpcError, assertRole, type AppRpcContext } from "../../kernel/index.js";
import type { ChannelRule } from "./options.js";
import type { MatchedChannel } from "./patterns.js";

/**
 * A join or send rule, checked exactly as a procedure permission: 401 signed out for
 * `"authenticated"` and `"admin"`, 403 without an accepted role, 403 when a function says no.
 */
export async function assertChannelRule(rule: ChannelRule | false, matched: MatchedChannel, channel: string, context: AppRpcContext, action = "join"): Promise<void> {
  if (rule === false) throw new RpcError("FORBIDDEN", { message: `Clients may not send on "${channel}"` });
  if (typeof rule === "function") {
    const allowed = await rule({ user: context.user, params: matched.params, db: context.db, context, channel });
    if (!allowed) throw new RpcError("FORBIDDEN", { message: `Permission denied on "${channel}"` });
    return;
  }
  if (rule === "public") return;
  // Signed out, the answer names the channel; the role check is the procedures' own.
  if (!context.user) throw new RpcError("UNAUTHORIZED", { message: `Sign in to ${action} "${channel}"` });
  assertRole(rule, matched.pattern.definition.roles ?? ["admin"], context);
}

export const joinRule = (matched: MatchedChannel): ChannelRule => matched.pattern.definition.join ?? "authenticated";
export const sendRule = (matched: MatchedChannel): ChannelRule | false => matched.pattern.definition.send ?? joinRule(matched);

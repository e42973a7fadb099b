import { RpcError, type AppRpcContext } from "../../kernel/index.js";

/** The part of the admin settings the rule reads. */
export interface SecondFactorRule {
  requireTwoFactor: boolean;
}

/**
 * `.admin({ requireTwoFactor: true })`: an admin whose account has no second factor on is refused
 * (403) everywhere the role is checked: `_admin.*`, the sections' routes, the export, and so the
 * dashboard. With two-factor on, better-auth issues no password session before the code is given,
 * so the account flag is what a session proves. Runs after the role check: 401 and the role's 403 come first.
 */
export function assertSecondFactor(rule: SecondFactorRule, context: Pick<AppRpcContext, "user">): void {
  if (!rule.requireTwoFactor || !context.user) return;
  if ((context.user as { twoFactorEnabled?: unknown }).twoFactorEnabled === true) return;
  throw new RpcError("FORBIDDEN", {
    message: "The admin API requires two-factor authentication: turn it on for this account (POST /api/auth/two-factor/enable), then sign in again",
  });
}

/** The same rule as a procedure middleware, chained after the role check. */
export function secondFactorMiddleware(rule: SecondFactorRule) {
  return async ({ context, next }: { context: AppRpcContext; next: () => Promise<any> }) => {
    assertSecondFactor(rule, context);
    return next();
  };
}

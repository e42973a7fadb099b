import type { BetterAuthOptions } from "better-auth";
import { TrellisError } from "../../kernel/index.js";
import { AUTH_EXTEND_LATE } from "./errors.js";

/**
 * The auth plugin's public extension point, provided as the `auth-options` service. A plugin that
 * declares `auth` as a (optional) dependency builds after it and may, in its own `build`, add to
 * the options the auth library is created with (the library is created in the `ready` hook, after
 * every build): email callbacks such as `sendVerificationEmail`, `sendResetPassword`, the
 * change-email confirmation, or library plugins such as magic link and email OTP. The mail plugin
 * wires its flows this way, without touching the auth plugin's files.
 */
export interface AuthExtensions {
  /**
   * Adds a step that receives the library's options (the app's `.auth()` options, merged) and
   * returns them changed. Steps run in the order they were added; only during `build`.
   */
  extend(step: (options: BetterAuthOptions) => BetterAuthOptions): void;
  /** Where the auth pages are, when the app serves them: the default landing of the links it sends. */
  readonly pages?: { readonly signIn: string; readonly resetPassword: string; readonly verified: string; readonly signedIn: string };
}

export function authExtensions(pages?: AuthExtensions["pages"]): AuthExtensions & { apply(options: BetterAuthOptions): BetterAuthOptions; seal(): void } {
  const steps: ((options: BetterAuthOptions) => BetterAuthOptions)[] = [];
  let sealed = false;
  return {
    pages,
    extend(step) {
      if (sealed) {
        throw new TrellisError(AUTH_EXTEND_LATE, "auth-options: extend() works only during build; the auth library already exists", { plugin: "auth" });
      }
      steps.push(step);
    },
    apply: (options) => steps.reduce((current, step) => step(current), options),
    seal: () => void (sealed = true),
  };
}

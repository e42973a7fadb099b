import type { BetterAuthOptions } from "better-auth";
import { magicLink } from "better-auth/plugins/magic-link";
import { emailOTP } from "better-auth/plugins/email-otp";
import type { MailAuthFlows } from "./options.js";
import type { MailerInternals } from "./mailer.js";
import { coreSendingPaths, pluginSendingPaths } from "./limits.js";

/** What mail uses of the auth plugin's `auth-options` service (see docs/auth.md). */
export interface AuthOptionsService {
  extend(step: (options: BetterAuthOptions) => BetterAuthOptions): void;
  readonly pages?: { readonly resetPassword: string };
}

/**
 * Wires the auth library's own email callbacks to the mailer. Each callback only queues (it never
 * waits for SMTP), so the endpoint answers as fast as without mail. A callback the app already
 * passed to `.auth()` is kept: its own sender wins.
 */
export function wireAuthFlows(auth: AuthOptionsService, mailer: MailerInternals, flows: MailAuthFlows, sending?: Set<string>): void {
  // The auth pages' reset page unless the app named its own (`/` without the pages).
  const resetLanding = flows.resetPasswordPage ?? auth.pages?.resetPassword ?? "/";
  auth.extend((options) => {
    const next: BetterAuthOptions = { ...options };
    const password = options.emailAndPassword;
    if (flows.verifyEmail) {
      next.emailVerification = {
        sendOnSignUp: true,
        autoSignInAfterVerification: true,
        ...options.emailVerification,
        sendVerificationEmail:
          options.emailVerification?.sendVerificationEmail ??
          (async ({ user, url }) => mailer.queueAuth("verify-email", { to: user.email, name: user.name, link: url })),
      };
    }
    if (password?.enabled) {
      next.emailAndPassword = {
        revokeSessionsOnPasswordReset: true,
        ...password,
        requireEmailVerification: password.requireEmailVerification ?? flows.requireEmailVerification,
        sendResetPassword:
          password.sendResetPassword ??
          (async ({ user, url }) => mailer.queueAuth("reset-password", { to: user.email, name: user.name, link: withLanding(url, resetLanding) })),
      };
    }
    if (flows.changeEmail) {
      next.user = {
        ...options.user,
        changeEmail: {
          enabled: true,
          ...options.user?.changeEmail,
          sendChangeEmailConfirmation:
            options.user?.changeEmail?.sendChangeEmailConfirmation ??
            (async ({ user, newEmail, url }) => mailer.queueAuth("change-email", { to: user.email, name: user.name, newEmail, link: url })),
        },
      };
    }
    const plugins = [...(options.plugins ?? [])];
    const has = (id: string) => plugins.some((plugin) => plugin.id === id);
    if (flows.magicLink && !has("magic-link")) {
      plugins.push(magicLink({ sendMagicLink: async ({ email, url }) => mailer.queueAuth("magic-link", { to: email, link: url }) }));
    }
    if (flows.emailOtp && !has("email-otp")) {
      plugins.push(emailOTP({ sendVerificationOTP: async ({ email, otp }) => mailer.queueAuth("sign-in-code", { to: email, code: otp }) }));
    }
    next.plugins = plugins;
    // The per-client limit counts every endpoint that can send: derived from the callbacks present
    // and from the mail plugins' own endpoint lists, the app's own senders and plugins included.
    for (const path of [...coreSendingPaths(next), ...pluginSendingPaths(plugins)]) sending?.add(path);
    return next;
  });
}

/** A reset link without a landing page is refused by the library; it lands on `page` instead. */
function withLanding(url: string, page: string): string {
  return url.endsWith("callbackURL=") ? `${url}${encodeURIComponent(page)}` : url;
}

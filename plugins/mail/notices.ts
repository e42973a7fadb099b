import type { BetterAuthOptions, BetterAuthPlugin } from "better-auth";
import { createAuthMiddleware, isAPIError } from "better-auth/api";
import type { AppDatabase } from "../../kernel/index.js";
import type { AuthOptionsService } from "./auth-flows.js";
import { deviceFingerprint, forgetDevices, sighted } from "./known-devices.js";
import type { MailerInternals } from "./mailer.js";
import type { MailNotices } from "./options.js";
import type { PendingWork } from "./pending-work.js";
import type { FactorChange } from "./templates.js";

type User = { id: string; email: string; name?: string | null };

/** Factor changes recognised by the endpoint that made them (the two-factor switch by its write). */
const FACTOR_PATHS: Record<string, FactorChange> = {
  "/change-password": "password-changed",
  "/passkey/verify-registration": "passkey-added",
  "/passkey/delete-passkey": "passkey-removed",
};

/** The auth library's admin endpoint that sets another user's password: the user in its body is the one told. */
const SET_USER_PASSWORD = "/admin/set-user-password";

/**
 * The service `factor-notices`, provided with `notices.factorChanged`: the admin plugin tells it
 * when an admin action writes a user's factors directly (no auth library endpoint to hook), and it
 * mails that user, saying an administrator made the change.
 */
export interface FactorNotices {
  /** Queues the notice to the user with this id after the request; an unknown id sends nothing, and nothing throws. */
  changedByAdmin(userId: string, factor: FactorChange): void;
}

export interface NoticeDeps {
  mailer: MailerInternals;
  db: AppDatabase<any>;
  /** Work started by a sign-in that the response does not wait for. */
  work: PendingWork;
  failed: (error: unknown) => void;
}

/**
 * Adds the security notices to the auth library as a library plugin of its own, placed last so
 * its hook runs after the two-factor plugin's (which withdraws the session of a sign-in still
 * waiting for its second factor). Nothing here can fail or slow the request: the device lookup and
 * the message run after it, and an error is reported, never thrown.
 */
export function wireNotices(auth: AuthOptionsService, notices: Required<MailNotices>, deps: NoticeDeps): void {
  auth.extend((options) => {
    const next: BetterAuthOptions = { ...options, plugins: [...(options.plugins ?? []), noticesPlugin(notices, deps, options.secret ?? "")] };
    if (notices.factorChanged && options.emailAndPassword?.enabled) {
      const own = options.emailAndPassword.onPasswordReset;
      next.emailAndPassword = {
        ...options.emailAndPassword,
        onPasswordReset: async (data, request) => {
          factorChanged(deps, data.user, "password-reset");
          await own?.(data, request);
        },
      };
    }
    return next;
  });
}

function noticesPlugin(notices: Required<MailNotices>, deps: NoticeDeps, secret: string): BetterAuthPlugin {
  // The endpoint calls whose user row turned two-factor on or off (set before the write, read after it).
  const switched = new WeakMap<object, boolean>();
  return {
    id: "trellis-notices",
    init: () => ({
      options: {
        databaseHooks: {
          user: {
            update: {
              before: async (data, context) => {
                if (notices.factorChanged && context && typeof data.twoFactorEnabled === "boolean") switched.set(context, data.twoFactorEnabled);
              },
              after: async (user, context) => {
                const enabled = context ? switched.get(context) : undefined;
                if (enabled === undefined || !user) return;
                switched.delete(context!);
                // The row written is the user told; the library's admin endpoints write another user's row.
                const byAdmin = context!.path.startsWith("/admin/") ? context!.context.session?.user.id !== user.id : Boolean(context!.context.session?.session.impersonatedBy);
                factorChanged(deps, user, enabled ? "two-factor-enabled" : "two-factor-disabled", byAdmin);
              },
            },
            // The device table exists only with `newSignIn`.
            ...(notices.newSignIn && { delete: { after: async (user: User) => deps.work.run(() => forgetDevices(deps.db, user.id), deps.failed) } }),
          },
        },
      },
    }),
    hooks: {
      after: [
        {
          matcher: () => true,
          handler: createAuthMiddleware(async (ctx) => {
            const created = ctx.context.newSession;
            // A sign-up is the user's first device, remembered silently; an impersonation is not theirs.
            if (notices.newSignIn && created && !created.session.impersonatedBy) {
              const { user, session } = created;
              const signUp = ctx.path.startsWith("/sign-up");
              deps.work.run(async () => {
                const seen = await sighted(deps.db, user.id, deviceFingerprint(secret, session.userAgent, session.ipAddress));
                if (seen !== "new" || signUp) return;
                deps.mailer.queueAuth("new-sign-in", { to: user.email, name: user.name, device: session.userAgent ?? undefined, address: session.ipAddress ?? undefined, time: now() }, { limited: false });
              }, deps.failed);
            }
            if (!notices.factorChanged) return;
            const returned = ctx.context.returned;
            if (isAPIError(returned) && returned.statusCode >= 400) return;
            const session = ctx.context.session;
            if (!session) return;
            const change = FACTOR_PATHS[ctx.path];
            // The session's own factor; an admin's impersonation is a change the user did not make.
            if (change) factorChanged(deps, session.user, change, Boolean(session.session.impersonatedBy));
            const target = (ctx.body as { userId?: unknown } | undefined)?.userId;
            // The target user is told, never the admin who set it (unless they set their own).
            if (ctx.path === SET_USER_PASSWORD && typeof target === "string") {
              if (target === session.user.id) factorChanged(deps, session.user, "password-changed");
              else factorNotices(deps).changedByAdmin(target, "password-changed");
            }
          }),
        },
      ],
    },
  };
}

/** The `factor-notices` service over the same mailer and pending work as the library's own notices. */
export function factorNotices(deps: NoticeDeps): FactorNotices {
  return {
    changedByAdmin(userId, factor) {
      deps.work.run(async () => {
        const user = (await deps.db.selectFrom("user").select(["id", "email", "name"]).where("id", "=", userId).executeTakeFirst()) as User | undefined;
        if (user) factorChanged(deps, user, factor, true);
      }, deps.failed);
    },
  };
}

function factorChanged(deps: NoticeDeps, user: User, factor: FactorChange, byAdmin = false): void {
  deps.mailer.queueAuth("factor-changed", { to: user.email, name: user.name ?? undefined, factor, ...(byAdmin && { byAdmin }), time: now() }, { limited: false });
}

function now(): string {
  return new Date().toUTCString();
}

import type { SessionState, SessionUser } from "../../kernel/index.js";
import type { AuthInstance } from "./index.js";

/**
 * Who a request's credential belongs to, with the ban rule applied. better-auth's admin plugin ends
 * a banned user's cookie sessions and refuses their sign-in, but nothing else: an API key still
 * resolves to its user, a session cached in a signed cookie (`session.cookieCache`) or in
 * `secondaryStorage` still carries the user as they were, and a `banned` flag written straight to
 * the table leaves every session alive. So every lookup checks the ban itself, and re-reads the
 * user's row whenever it may have come from a cache. An impersonation session also ends with its
 * impersonator's right to impersonate (banned, deleted, or no longer an admin).
 */

/** A credential that is valid but whose user must be treated as signed out (banned, or deleted). */
export const SIGNED_OUT = Symbol("signed out");

export type SessionLookup = (headers: Headers, options?: { refresh?: boolean }) => Promise<SessionState | undefined | typeof SIGNED_OUT>;

/** The user columns a cached copy may hold stale that Trellis' own checks read. */
const LIVE_COLUMNS = ["role", "banned", "banReason", "banExpires", "twoFactorEnabled"] as const;

/**
 * @param reread re-read the user's row on every lookup: true when better-auth may answer from a
 *   cache (cookie cache or secondary storage), so bans, deletions and role changes apply at once.
 */
export function sessionLookup(auth: () => AuthInstance, reread: boolean): SessionLookup {
  return async (headers, { refresh = true } = {}) => {
    const instance = auth();
    // Without refresh the lookup writes nothing (no session extension, no cookie to pass on).
    const found = await instance.api.getSession({ headers, ...(refresh ? {} : { query: { disableRefresh: true } }) });
    if (!found) return undefined;
    let user = found.user as SessionUser;
    if (reread) {
      const context = await instance.$context;
      const current = (await context.internalAdapter.findUserById(user.id)) as Record<string, unknown> | null;
      if (!current) return SIGNED_OUT;
      user = { ...user };
      for (const column of LIVE_COLUMNS) if (column in current) user[column] = current[column] as never;
    }
    if (isBanned(user)) return SIGNED_OUT;
    const impersonator = (found.session as { impersonatedBy?: unknown }).impersonatedBy;
    if (typeof impersonator === "string" && impersonator && !(await mayImpersonate(instance, impersonator))) return SIGNED_OUT;
    return { user, session: found.session };
  };
}

/**
 * An impersonation session (the admin plugin's `impersonate-user`) belongs to the impersonated user,
 * so ending the admin's own sessions leaves it alive: it holds only while its impersonator still
 * exists, is not banned and still has the library's `impersonate` permission. One read of the
 * impersonator's row, on impersonated sessions only.
 */
async function mayImpersonate(instance: AuthInstance, userId: string): Promise<boolean> {
  const context = await instance.$context;
  const admin = (await context.internalAdapter.findUserById(userId)) as (SessionUser & { banExpires?: unknown }) | null;
  if (!admin || isBanned(admin)) return false;
  const check = instance.api.userHasPermission;
  if (typeof check !== "function") return true;
  const { success } = await check({ body: { userId, role: admin.role ?? undefined, permissions: { user: ["impersonate"] } } });
  return success === true;
}

/**
 * The admin plugin's rule: banned while `banned` is set and `banExpires` is empty or ahead. An
 * unreadable `banExpires` counts as a ban (fail closed).
 */
export function isBanned(user: Pick<SessionUser, "banned"> & { banExpires?: unknown }, now = Date.now()): boolean {
  if (!user.banned) return false;
  if (user.banExpires === null || user.banExpires === undefined) return true;
  const until = new Date(user.banExpires as string | number | Date).getTime();
  return Number.isNaN(until) || until > now;
}

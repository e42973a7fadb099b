import { z } from "zod";
import { RpcError, type AppDatabase, type AppRpcContext, type ProcedureBase } from "../../kernel/index.js";
import type { AdminUser } from "./users.js";

/** The part of the auth library these actions use: its server API (user creation) and its internal adapter. */
export type AuthApi = {
  api: Record<string, (request: { body?: unknown; headers?: Headers }) => Promise<any>>;
  options: { plugins?: readonly { id: string; options?: { defaultBanReason?: string; defaultBanExpiresIn?: number } }[] };
  $context: Promise<{ internalAdapter: Record<string, (...args: any[]) => Promise<any>> }>;
};

const id = z.string().min(1);
const role = z.string().trim().min(1).max(64).regex(/^[^,\s]+$/, "a role is one word, without commas");

/**
 * The purpose-built writes on users and their credentials. The caller already passed the admin
 * API's own role check (`roles`, whose comma-separated `user.role` is read trimmed), which is the
 * one authority over `_admin`: the writes then go through the auth library's internal adapter, as its
 * own admin endpoints do after their check, so its hooks run and its caches stay right (a ban ends
 * the user's sessions, a revoked session is gone from secondary storage too). The library's admin
 * endpoints are not called with the admin's headers: they check the caller again by the library's
 * own roles (split on bare commas, its access-control list), which refused admins Trellis lets in.
 * The ban and role rules of every surface read the user row on each request
 * (plugins/auth/session-lookup.ts), so every action applies on the next request.
 */
export function userActions(
  base: ProcedureBase<AppRpcContext>,
  db: AppDatabase<any>,
  auth: () => AuthApi | undefined,
  hasApiKeys: boolean,
  reload: (userId: string) => Promise<AdminUser>,
) {
  const library = () => {
    const found = auth();
    if (!found) throw new RpcError("SERVICE_UNAVAILABLE", { status: 503, message: "The auth library is not ready yet" });
    return found;
  };
  const adapter = async () => (await library().$context).internalAdapter;
  const exists = async (userId: string) => {
    if (!(await db.selectFrom("user").select("id").where("id", "=", userId).executeTakeFirst())) throw new RpcError("NOT_FOUND", { message: `No user with id "${userId}"` });
  };

  const create = base
    .input(z.object({ email: z.email(), name: z.string().trim().min(1).max(200), password: z.string().min(8).max(128).optional(), roles: z.array(role).optional() }))
    .handler(async ({ input }): Promise<AdminUser> => {
      // Without request headers the library's endpoint creates the user as server code (no caller to check).
      const { user } = await library().api.createUser({
        body: { email: input.email.toLowerCase(), name: input.name, password: input.password, role: input.roles?.length ? input.roles : undefined },
      });
      return reload(user.id);
    });

  const setRoles = base.input(z.object({ id, roles: z.array(role) })).handler(async ({ input }): Promise<AdminUser> => {
    await exists(input.id);
    // No role at all is stored as the library's default ("user"), never as an empty string.
    await (await adapter()).updateUser(input.id, { role: input.roles.length ? input.roles.join(",") : "user" });
    return reload(input.id);
  });

  const ban = base
    .input(z.object({ id, reason: z.string().trim().max(500).optional(), expiresAt: z.coerce.date().optional() }))
    .handler(async ({ input, context }): Promise<AdminUser> => {
      if (input.expiresAt && !(input.expiresAt.getTime() > Date.now())) {
        throw new RpcError("BAD_REQUEST", { message: "expiresAt: the ban must end in the future (leave it out for a ban without end)" });
      }
      await exists(input.id);
      if (input.id === context.user?.id) throw new RpcError("BAD_REQUEST", { message: "You cannot ban yourself" });
      // The library's own defaults for a ban without a reason or an end, as its ban endpoint applies them.
      const defaults = library().options.plugins?.find((plugin) => plugin.id === "admin")?.options ?? {};
      const banExpires = input.expiresAt ?? (defaults.defaultBanExpiresIn ? new Date(Date.now() + defaults.defaultBanExpiresIn * 1000) : null);
      const users = await adapter();
      await users.updateUser(input.id, { banned: true, banReason: input.reason || defaults.defaultBanReason || "No reason", banExpires, updatedAt: new Date() });
      await users.deleteUserSessions(input.id);
      return reload(input.id);
    });

  const unban = base.input(z.object({ id })).handler(async ({ input }): Promise<AdminUser> => {
    await exists(input.id);
    await (await adapter()).updateUser(input.id, { banned: false, banExpires: null, banReason: null, updatedAt: new Date() });
    return reload(input.id);
  });

  /** One session, by its id: the token never leaves the server. */
  const revokeSession = base.input(z.object({ id })).handler(async ({ input }): Promise<{ revoked: number }> => {
    const found = await db.selectFrom("session").select("token").where("id", "=", input.id).executeTakeFirst();
    if (!found) throw new RpcError("NOT_FOUND", { message: `No session with id "${input.id}"` });
    await (await adapter()).deleteSession(found.token);
    return { revoked: 1 };
  });

  const revokeSessions = base.input(z.object({ id })).handler(async ({ input }): Promise<{ revoked: number }> => {
    await exists(input.id);
    const { count } = (await db.selectFrom("session").select((eb) => eb.fn.countAll().as("count")).where("userId", "=", input.id).executeTakeFirstOrThrow()) as { count: number | string };
    await (await adapter()).deleteUserSessions(input.id);
    return { revoked: Number(count) };
  });

  /**
   * The API-key plugin lets only a key's owner delete it, so an admin's revocation deletes the row:
   * keys are looked up in the table on every request (the plugin's default storage), so it is
   * refused from the next request on.
   */
  const revokeApiKey = base.input(z.object({ id })).handler(async ({ input }): Promise<{ revoked: number }> => {
    if (!hasApiKeys) throw new RpcError("BAD_REQUEST", { message: "This app has no API keys (schema .auth({ apiKeys: true }))" });
    const gone = await db.deleteFrom("apikey").where("id", "=", input.id).executeTakeFirst();
    if (Number(gone.numDeletedRows) === 0) throw new RpcError("NOT_FOUND", { message: `No API key with id "${input.id}"` });
    return { revoked: 1 };
  });

  return { create, setRoles, ban, unban, revokeSession, revokeSessions, revokeApiKey };
}

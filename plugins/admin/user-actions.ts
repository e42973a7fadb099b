import { z } from "zod";
import { RpcError, type AppDatabase, type AppRpcContext, type ProcedureBase } from "../../kernel/index.js";
import type { AdminUser } from "./users.js";

/** The part of the auth library's server API these actions call (its admin plugin, plus the password reset). */
export type AuthApi = { api: Record<string, (request: { body?: unknown; headers?: Headers }) => Promise<any>> };

const id = z.string().min(1);
const role = z.string().trim().min(1).max(64).regex(/^[^,\s]+$/, "a role is one word, without commas");

/**
 * The purpose-built writes on users and their credentials. Each calls the auth library's admin API
 * with the admin's own request headers, so the library checks the caller again and keeps its
 * caches right: a ban ends the user's sessions, a revoked session is gone from secondary storage
 * too. The ban and role rules of every surface read the user row on each request
 * (plugins/auth/session-lookup.ts), so every action applies on the next request.
 */
export function userActions(
  base: ProcedureBase<AppRpcContext>,
  db: AppDatabase<any>,
  auth: () => AuthApi | undefined,
  hasApiKeys: boolean,
  reload: (userId: string) => Promise<AdminUser>,
) {
  const api = () => {
    const found = auth();
    if (!found) throw new RpcError("SERVICE_UNAVAILABLE", { status: 503, message: "The auth library is not ready yet" });
    return found.api;
  };
  const exists = async (userId: string) => {
    if (!(await db.selectFrom("user").select("id").where("id", "=", userId).executeTakeFirst())) throw new RpcError("NOT_FOUND", { message: `No user with id "${userId}"` });
  };

  const create = base
    .input(z.object({ email: z.email(), name: z.string().trim().min(1).max(200), password: z.string().min(8).max(128).optional(), roles: z.array(role).optional() }))
    .handler(async ({ input, context }): Promise<AdminUser> => {
      const { user } = await api().createUser({
        body: { email: input.email.toLowerCase(), name: input.name, password: input.password, role: input.roles?.length ? input.roles : undefined },
        headers: context.headers,
      });
      return reload(user.id);
    });

  const setRoles = base.input(z.object({ id, roles: z.array(role) })).handler(async ({ input, context }): Promise<AdminUser> => {
    await exists(input.id);
    // No role at all is stored as the library's default ("user"), never as an empty string.
    await api().setRole({ body: { userId: input.id, role: input.roles.length ? input.roles : "user" }, headers: context.headers });
    return reload(input.id);
  });

  const ban = base
    .input(z.object({ id, reason: z.string().trim().max(500).optional(), expiresAt: z.coerce.date().optional() }))
    .handler(async ({ input, context }): Promise<AdminUser> => {
      let banExpiresIn: number | undefined;
      if (input.expiresAt) {
        banExpiresIn = Math.ceil((input.expiresAt.getTime() - Date.now()) / 1000);
        if (!(banExpiresIn > 0)) throw new RpcError("BAD_REQUEST", { message: "expiresAt: the ban must end in the future (leave it out for a ban without end)" });
      }
      await exists(input.id);
      await api().banUser({ body: { userId: input.id, banReason: input.reason || undefined, banExpiresIn }, headers: context.headers });
      return reload(input.id);
    });

  const unban = base.input(z.object({ id })).handler(async ({ input, context }): Promise<AdminUser> => {
    await exists(input.id);
    await api().unbanUser({ body: { userId: input.id }, headers: context.headers });
    return reload(input.id);
  });

  /** One session, by its id: the token never leaves the server. */
  const revokeSession = base.input(z.object({ id })).handler(async ({ input, context }): Promise<{ revoked: number }> => {
    const found = await db.selectFrom("session").select("token").where("id", "=", input.id).executeTakeFirst();
    if (!found) throw new RpcError("NOT_FOUND", { message: `No session with id "${input.id}"` });
    await api().revokeUserSession({ body: { sessionToken: found.token }, headers: context.headers });
    return { revoked: 1 };
  });

  const revokeSessions = base.input(z.object({ id })).handler(async ({ input, context }): Promise<{ revoked: number }> => {
    await exists(input.id);
    const { count } = (await db.selectFrom("session").select((eb) => eb.fn.countAll().as("count")).where("userId", "=", input.id).executeTakeFirstOrThrow()) as { count: number | string };
    await api().revokeUserSessions({ body: { userId: input.id }, headers: context.headers });
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

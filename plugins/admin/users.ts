import { z } from "zod";
import { sql } from "kysely";
import { RpcError, decodeRow, type AppDatabase, type AppRpcContext, type DatabaseKind, type ProcedureBase, type SchemaModel } from "../../kernel/index.js";
import { userActions, type AuthApi } from "./user-actions.js";
import { userFactors, type AdminUserFactors, type FactorNoticesLike } from "./user-factors.js";

type Row = Record<string, unknown>;

export interface AdminUser {
  id: string;
  email: string;
  name: string;
  emailVerified: boolean;
  image: string | null;
  roles: string[];
  banned: boolean;
  banReason: string | null;
  banExpires: Date | null;
  createdAt: Date;
}

/** What an admin sees of a user: never a token, a password hash or a key. */
export interface AdminUserDetail extends AdminUser, AdminUserFactors {
  sessions: { id: string; createdAt: Date; expiresAt: Date; ipAddress: string | null; userAgent: string | null; impersonatedBy: string | null }[];
  accounts: { id: string; providerId: string; accountId: string; createdAt: Date; hasPassword: boolean }[];
  /** Undefined when the schema has no `apikey` table. */
  apiKeys?: { id: string; name: string | null; start: string | null; prefix: string | null; enabled: boolean; createdAt: Date; expiresAt: Date | null; lastRequest: Date | null }[];
}

const id = z.string().min(1);
const listInput = z.object({
  search: z.string().max(200).optional(),
  take: z.number().int().min(1).max(200).optional(),
  skip: z.number().int().min(0).max(100_000).optional(),
});

/** `like` pattern for "contains", with the wildcards of the search itself escaped. */
function containsPattern(search: string): string {
  return `%${search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export function rolesOf(role: unknown): string[] {
  return typeof role === "string" ? role.split(",").map((r) => r.trim()).filter(Boolean) : [];
}

/**
 * `_admin.users.*`: find and inspect users; the writes (roles, bans, sessions, API keys, new users)
 * go through the auth library's own admin API (user-actions.ts), so its rules and its caches apply.
 */
export function userProcedures(
  base: ProcedureBase<AppRpcContext>,
  db: AppDatabase<any>,
  kind: DatabaseKind,
  schema: SchemaModel,
  auth: () => AuthApi | undefined,
  notices: () => FactorNoticesLike | undefined,
) {
  const decode = (table: string, row: Row) => decodeRow(kind, schema.tables[table]!, row) as Row;
  const user = (row: Row): AdminUser => {
    const r = decode("user", row);
    return {
      id: r.id as string,
      email: r.email as string,
      name: r.name as string,
      emailVerified: Boolean(r.emailVerified),
      image: (r.image as string | null) ?? null,
      roles: rolesOf(r.role),
      banned: Boolean(r.banned),
      banReason: (r.banReason as string | null) ?? null,
      banExpires: (r.banExpires as Date | null) ?? null,
      createdAt: r.createdAt as Date,
    };
  };
  const hasApiKeys = Boolean(schema.tables.apikey);
  const factors = userFactors(base, db, kind, schema, notices);

  const list = base.input(listInput).handler(async ({ input }): Promise<{ data: AdminUser[]; count: number }> => {
    const search = input.search?.trim();
    const where = search
      ? sql<boolean>`(lower(${sql.ref("email")}) like ${containsPattern(search)} escape '\\' or lower(${sql.ref("name")}) like ${containsPattern(search)} escape '\\')`
      : sql<boolean>`1 = 1`;
    const rows = await db.selectFrom("user").selectAll().where(where).orderBy("createdAt", "desc").orderBy("id").limit(input.take ?? 25).offset(input.skip ?? 0).execute();
    const { count } = (await db.selectFrom("user").select((eb) => eb.fn.countAll().as("count")).where(where).executeTakeFirstOrThrow()) as { count: number | string };
    return { data: rows.map(user), count: Number(count) };
  });

  const get = base.input(z.object({ id })).handler(async ({ input }): Promise<AdminUserDetail> => {
    const row = await db.selectFrom("user").selectAll().where("id", "=", input.id).executeTakeFirst();
    if (!row) throw new RpcError("NOT_FOUND", { message: `No user with id "${input.id}"` });
    const sessions = await db
      .selectFrom("session")
      .select(["id", "createdAt", "expiresAt", "ipAddress", "userAgent", "impersonatedBy"])
      .where("userId", "=", input.id)
      .orderBy("createdAt", "desc")
      .execute();
    const accounts = await db.selectFrom("account").select(["id", "providerId", "accountId", "createdAt", "password"]).where("userId", "=", input.id).execute();
    const apiKeys = hasApiKeys
      ? await db
          .selectFrom("apikey")
          .select(["id", "name", "start", "prefix", "enabled", "createdAt", "expiresAt", "lastRequest"])
          .where("referenceId", "=", input.id)
          .orderBy("createdAt", "desc")
          .execute()
      : undefined;
    return {
      ...user(row),
      ...(await factors.of(decode("user", row))),
      sessions: sessions.map((s) => decode("session", s) as AdminUserDetail["sessions"][number]),
      accounts: accounts.map((a) => {
        const { password, ...rest } = decode("account", a);
        return { ...(rest as Omit<AdminUserDetail["accounts"][number], "hasPassword">), hasPassword: typeof password === "string" && password.length > 0 };
      }),
      ...(apiKeys && { apiKeys: apiKeys.map((k) => ({ ...(decode("apikey", k) as NonNullable<AdminUserDetail["apiKeys"]>[number]), enabled: (k as Row).enabled !== false && (k as Row).enabled !== 0 })) }),
    };
  });

  return { list, get, ...factors.procedures, ...userActions(base, db, auth, hasApiKeys, async (userId) => user((await db.selectFrom("user").selectAll().where("id", "=", userId).executeTakeFirstOrThrow()) as Row)) };
}

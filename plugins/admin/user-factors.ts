import { z } from "zod";
import { RpcError, decodeRow, type AppDatabase, type AppRpcContext, type DatabaseKind, type ProcedureBase, type SchemaModel } from "../../kernel/index.js";

type Row = Record<string, unknown>;

/** A user's second factor and passkeys as an admin sees them: never a secret, a backup code or a public key. */
export interface AdminUserFactors {
  /** Undefined when the schema has no two-factor tables. */
  twoFactor?: { enabled: boolean };
  /** Undefined when the schema has no `passkey` table. */
  passkeys?: { id: string; name: string | null; deviceType: string; backedUp: boolean; createdAt: Date | null }[];
}

/**
 * The part of the mail plugin's `factor-notices` service these actions use (provided with
 * `.mail({ notices: { factorChanged: true } })`): it mails the user, after the request, that an
 * administrator changed a factor. Read through the kernel's services, never imported.
 */
export interface FactorNoticesLike {
  changedByAdmin(userId: string, factor: "two-factor-disabled" | "passkey-removed"): void;
}

const id = z.string().min(1);

/**
 * What `_admin.users.get` adds with `schema().auth({ twoFactor, passkeys })`, and the two actions on
 * it: `resetTwoFactor` (the user lost their authenticator: the factor and its backup codes go, and
 * the next sign-in asks only the password) and `deletePasskey`. Both write the tables directly, as
 * `revokeApiKey` does: the plugins read them on every sign-in, so the change applies at once. No
 * library hook sees these writes, so each tells `notices` (when the app mails them) itself.
 */
export function userFactors(base: ProcedureBase<AppRpcContext>, db: AppDatabase<any>, kind: DatabaseKind, schema: SchemaModel, notices: () => FactorNoticesLike | undefined) {
  const hasTwoFactor = Boolean(schema.tables.twoFactor && schema.tables.user?.columns.twoFactorEnabled);
  const hasPasskeys = Boolean(schema.tables.passkey);

  async function of(user: Row): Promise<AdminUserFactors> {
    const userId = user.id as string;
    const passkeys = hasPasskeys
      ? await db.selectFrom("passkey").select(["id", "name", "deviceType", "backedUp", "createdAt"]).where("userId", "=", userId).orderBy("createdAt", "desc").execute()
      : undefined;
    return {
      ...(hasTwoFactor && { twoFactor: { enabled: Boolean(user.twoFactorEnabled) } }),
      ...(passkeys && { passkeys: passkeys.map((row) => decodeRow(kind, schema.tables.passkey!, row as Row) as NonNullable<AdminUserFactors["passkeys"]>[number]).map((p) => ({ ...p, backedUp: Boolean(p.backedUp) })) }),
    };
  }

  const resetTwoFactor = base.input(z.object({ id })).handler(async ({ input }): Promise<{ reset: boolean }> => {
    if (!hasTwoFactor) throw new RpcError("BAD_REQUEST", { message: "This app has no two-factor sign-in (schema .auth({ twoFactor: true }))" });
    const user = await db.selectFrom("user").select("twoFactorEnabled").where("id", "=", input.id).executeTakeFirst();
    if (!user) throw new RpcError("NOT_FOUND", { message: `No user with id "${input.id}"` });
    await db.updateTable("user").set({ twoFactorEnabled: false }).where("id", "=", input.id).execute();
    await db.deleteFrom("twoFactor").where("userId", "=", input.id).execute();
    // Only a factor that was on is news: an enrolment never confirmed turned nothing off.
    if (user.twoFactorEnabled) notices()?.changedByAdmin(input.id, "two-factor-disabled");
    return { reset: true };
  });

  const deletePasskey = base.input(z.object({ id })).handler(async ({ input }): Promise<{ deleted: number }> => {
    if (!hasPasskeys) throw new RpcError("BAD_REQUEST", { message: "This app has no passkeys (schema .auth({ passkeys: true }))" });
    const passkey = await db.selectFrom("passkey").select("userId").where("id", "=", input.id).executeTakeFirst();
    const gone = await db.deleteFrom("passkey").where("id", "=", input.id).executeTakeFirst();
    if (!passkey || Number(gone.numDeletedRows) === 0) throw new RpcError("NOT_FOUND", { message: `No passkey with id "${input.id}"` });
    notices()?.changedByAdmin(passkey.userId as string, "passkey-removed");
    return { deleted: 1 };
  });

  return { of, procedures: { resetTwoFactor, deletePasskey } };
}

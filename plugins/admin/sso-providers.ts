import { z } from "zod";
import { RpcError, type AppDatabase, type AppRpcContext, type ProcedureBase, type SchemaModel } from "../../kernel/index.js";
import type { AuthApi } from "./user-actions.js";

/** A single sign-on provider as an admin sees it: never its client secret or SAML keys. */
export interface AdminSsoProvider {
  providerId: string;
  type: "oidc" | "saml";
  issuer: string;
  /** Users whose email ends in this domain sign in through the provider. */
  domain: string;
  domainVerified: boolean;
  organizationId: string | null;
  /** The last four characters of the OIDC client id, to tell registrations apart. */
  clientIdEnd: string | null;
  /** Who registered it (null once that user is gone). */
  registeredBy: { id: string; email: string } | null;
  /** The redirect URL to enter at the identity provider. */
  callbackUrl: string;
}

type Row = Record<string, unknown>;
const providerId = z.string().trim().min(1).max(64).regex(/^[A-Za-z0-9_-]+$/, "letters, digits, - and _ only (it is part of the callback URL)");

/**
 * `_admin.sso.*` with `schema().auth({ sso: true })`: every provider (the library lists only the
 * caller's own), registration through the library's own endpoint as the signed-in admin (it
 * discovers and checks the issuer; `.auth()` lets only the admin roles register), and deletion of
 * any provider with the accounts linked through it, as the library's own delete does for its owner.
 */
export function ssoProviders(base: ProcedureBase<AppRpcContext>, db: AppDatabase<any>, schema: SchemaModel, auth: () => AuthApi | undefined) {
  const enabled = () => {
    if (!schema.tables.ssoProvider) throw new RpcError("BAD_REQUEST", { message: "This app has no single sign-on (schema .auth({ sso: true }))" });
  };
  const library = () => {
    const found = auth();
    if (!found) throw new RpcError("SERVICE_UNAVAILABLE", { status: 503, message: "The auth library is not ready yet" });
    return found;
  };

  const list = base.handler(async (): Promise<AdminSsoProvider[]> => {
    enabled();
    const { baseURL } = (await library().$context) as unknown as { baseURL: string };
    const rows = (await db
      .selectFrom("ssoProvider")
      .leftJoin("user", "user.id", "ssoProvider.userId")
      .select(["ssoProvider.providerId", "ssoProvider.issuer", "ssoProvider.domain", "ssoProvider.domainVerified", "ssoProvider.organizationId", "ssoProvider.oidcConfig", "ssoProvider.samlConfig", "ssoProvider.userId", "user.email"])
      .orderBy("ssoProvider.providerId")
      .execute()) as Row[];
    return rows.map((row) => ({
      providerId: row.providerId as string,
      type: row.samlConfig ? "saml" : "oidc",
      issuer: row.issuer as string,
      domain: row.domain as string,
      domainVerified: row.domainVerified === true || row.domainVerified === 1,
      organizationId: (row.organizationId as string | null) ?? null,
      clientIdEnd: clientIdEnd(row.oidcConfig),
      registeredBy: row.userId && row.email ? { id: row.userId as string, email: row.email as string } : null,
      callbackUrl: `${baseURL}/sso/callback/${encodeURIComponent(row.providerId as string)}`,
    }));
  });

  const register = base
    .input(
      z.object({
        providerId,
        issuer: z.url({ protocol: /^https?$/ }),
        domain: z.string().trim().toLowerCase().min(1).max(253).regex(/^[a-z0-9.-]+$/, "a domain such as example.com"),
        clientId: z.string().trim().min(1).max(512),
        clientSecret: z.string().min(1).max(2048),
        scopes: z.array(z.string().trim().min(1).max(128)).max(20).optional(),
      }),
    )
    .handler(async ({ input, context }): Promise<{ providerId: string }> => {
      enabled();
      const { clientId, clientSecret, scopes, ...rest } = input;
      // The admin's own request headers: the library records them as the owner and applies its limit.
      await library().api.registerSSOProvider({ body: { ...rest, oidcConfig: { clientId, clientSecret, ...(scopes && { scopes }) } }, headers: context.headers });
      return { providerId: input.providerId };
    });

  const remove = base.input(z.object({ providerId })).handler(async ({ input }): Promise<{ deleted: true }> => {
    enabled();
    await db.transaction().execute(async (trx) => {
      const gone = await trx.deleteFrom("ssoProvider").where("providerId", "=", input.providerId).executeTakeFirst();
      if (Number(gone.numDeletedRows) === 0) throw new RpcError("NOT_FOUND", { message: `No single sign-on provider "${input.providerId}"` });
      await trx.deleteFrom("account").where("providerId", "=", input.providerId).execute();
    });
    return { deleted: true };
  });

  return { list, register, delete: remove };
}

function clientIdEnd(config: unknown): string | null {
  if (typeof config !== "string") return null;
  try {
    const clientId = (JSON.parse(config) as { clientId?: unknown }).clientId;
    return typeof clientId === "string" ? clientId.slice(-4) : null;
  } catch {
    return null;
  }
}

/**
 * The tables better-auth's further sign-in methods need, each behind its own `.auth()` flag:
 * `twoFactor` (better-auth's `twoFactor` plugin: `user.twoFactorEnabled` and the `twoFactor` table),
 * `passkeys` (`@better-auth/passkey`: the `passkey` table) and `sso` (`@better-auth/sso`: the
 * `ssoProvider` table). Field names and defaults are the plugins' own, as in auth-tables.ts.
 */
import { columnModels, t, type ColumnBuilder, type ColumnModels, type ColumnsOf, type ColumnStateOf as Of } from "./columns.js";

export interface SignInOptions {
  /**
   * Adds `user.twoFactorEnabled` and the `twoFactor` table; the auth plugin then enables
   * better-auth's two-factor plugin (TOTP, backup codes, trusted devices).
   * @default false
   */
  twoFactor?: boolean;
  /**
   * Adds the `passkey` table; the auth plugin then enables `@better-auth/passkey`.
   * @default false
   */
  passkeys?: boolean;
  /**
   * Adds the `ssoProvider` table; the auth plugin then enables `@better-auth/sso` (OIDC and SAML
   * providers registered at run time).
   * @default false
   */
  sso?: boolean;
}

/** The flags as the schema model keeps them (`SchemaModel["auth"]`). */
export type SignInFlags = { readonly [K in keyof SignInOptions]?: boolean };

type Id = Of<"text", string, false, false, true>;
type Text = Of<"text", string>;
type TextOrNull = Of<"text", string, true>;
type Flag = Of<"boolean", boolean>;
type FlagOrNull = Of<"boolean", boolean, true, true>;
type WhenOrNull = Of<"timestamp", Date, true>;

export type TwoFactorColumns = {
  id: Id;
  secret: Text;
  backupCodes: Text;
  userId: Text;
  verified: FlagOrNull;
  failedVerificationCount: Of<"integer", number, true, true>;
  lockedUntil: WhenOrNull;
};

export type PasskeyColumns = {
  id: Id;
  name: TextOrNull;
  publicKey: Text;
  userId: Text;
  credentialID: Text;
  counter: Of<"integer", number>;
  deviceType: Text;
  backedUp: Flag;
  transports: TextOrNull;
  createdAt: WhenOrNull;
  aaguid: TextOrNull;
};

export type SsoProviderColumns = {
  id: Id;
  issuer: Text;
  oidcConfig: TextOrNull;
  samlConfig: TextOrNull;
  userId: TextOrNull;
  providerId: Text;
  organizationId: TextOrNull;
  domain: Text;
  domainVerified: FlagOrNull;
};

export type TwoFactorTables = { user: { twoFactorEnabled: FlagOrNull }; twoFactor: TwoFactorColumns };
export type PasskeyTables = { passkey: PasskeyColumns };
export type SsoTables = { ssoProvider: SsoProviderColumns };

/** The tables the three flags add, typed from the flags' literal values. */
export type SignInTables<T, P, S> = (T extends true ? TwoFactorTables : {}) & (P extends true ? PasskeyTables : {}) & (S extends true ? SsoTables : {});

const id = (b: ColumnBuilder) => b.text().primaryKey();
const owner = (b: ColumnBuilder) => b.text().references("user", "id", { onDelete: "cascade" }).index();

/** The secret and backup codes are stored encrypted with the auth secret by the plugin itself, and redacted in the audit log. */
const twoFactor = (b: ColumnBuilder): ColumnsOf<TwoFactorColumns> => ({
  id: id(b),
  secret: b.text().index().secret(),
  backupCodes: b.text().secret(),
  userId: owner(b),
  verified: b.boolean().nullable().default(true),
  failedVerificationCount: b.integer().nullable().default(0),
  lockedUntil: b.timestamp().nullable(),
});

const passkey = (b: ColumnBuilder): ColumnsOf<PasskeyColumns> => ({
  id: id(b),
  name: b.text().nullable(),
  publicKey: b.text(),
  userId: owner(b),
  credentialID: b.text().index(),
  counter: b.integer(),
  deviceType: b.text(),
  backedUp: b.boolean(),
  transports: b.text().nullable(),
  createdAt: b.timestamp().nullable(),
  aaguid: b.text().nullable(),
});

/**
 * `userId` is who registered the provider, not who signs in through it: kept nullable and set to
 * null when that user goes, so a provider outlives the admin who added it. `organizationId` has no
 * foreign key: organizations are their own schema flag.
 */
const ssoProvider = (b: ColumnBuilder): ColumnsOf<SsoProviderColumns> => ({
  id: id(b),
  issuer: b.text(),
  oidcConfig: b.text().nullable().secret(),
  samlConfig: b.text().nullable().secret(),
  userId: b.text().nullable().references("user", "id", { onDelete: "set null" }).index(),
  providerId: b.text().unique(),
  organizationId: b.text().nullable(),
  domain: b.text(),
  domainVerified: b.boolean().nullable().default(false),
});

/** The column models the flags add (the `user` entry merges into the core user table). */
export function signInTables(flags: SignInFlags | undefined): Record<string, ColumnModels> {
  const tables: Record<string, ColumnModels> = {};
  if (flags?.twoFactor) {
    tables.user = columnModels({ twoFactorEnabled: t.boolean().nullable().default(false) });
    tables.twoFactor = columnModels(twoFactor(t));
  }
  if (flags?.passkeys) tables.passkey = columnModels(passkey(t));
  if (flags?.sso) tables.ssoProvider = columnModels(ssoProvider(t));
  return tables;
}

/** The flags set on either side: a later `.auth()` call (or version) adds, never drops, a method. */
export function signInFlags(given: SignInOptions, earlier: SignInFlags | undefined): SignInFlags {
  const flags: { -readonly [K in keyof SignInFlags]: boolean } = {};
  for (const key of ["twoFactor", "passkeys", "sso"] as const) if (given[key] === true || earlier?.[key] === true) flags[key] = true;
  return flags;
}

/** The core auth tables with what the flags add: `user` gains columns, the rest are new tables. */
export function mergeSignIn(core: Record<string, ColumnModels>, flags: SignInFlags | undefined): Record<string, ColumnModels> {
  const out = { ...core };
  for (const [name, columns] of Object.entries(signInTables(flags))) out[name] = { ...out[name], ...columns };
  return out;
}

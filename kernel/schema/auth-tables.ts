/**
 * The tables better-auth 1.7 reads and writes, with the admin plugin's fields always present and the
 * API-key plugin's table on request. Column names are better-auth's default field names, because it
 * queries this schema through Kysely without a field mapping. Nullable means better-auth's
 * `required: false`; literal defaults mirror its own migration so rows written by hand stay valid.
 */
import {
  columnModels,
  t,
  timestamps,
  type ColumnBuilder,
  type ColumnModels,
  type ColumnsOf,
  type ColumnStateOf as Of,
} from "./columns.js";
import { rel, type RelationDef } from "./relations.js";
import type { RelationState } from "./types.js";
import type { SignInOptions } from "./signin-tables.js";

export interface AuthOptions extends SignInOptions {
  /**
   * The recognised role set, stored in the schema's `auth.roles`. A user may hold several roles, so
   * `user.role` stays a comma-separated `string | null` (read it with `parseSet`).
   * @default undefined (any role string is accepted)
   */
  roles?: readonly string[];
  /**
   * Adds the `apikey` table the better-auth API-key plugin needs.
   * @default false
   */
  apiKeys?: boolean;
}

// Spelled out (not inferred from the definitions below, which they check) so declaration files name
// them instead of inlining every column of every auth table.
type Id = Of<"text", string, false, false, true>;
type Text = Of<"text", string>;
type TextOrNull = Of<"text", string, true>;
type IntOrNull = Of<"integer", number, true>;
type When = Of<"timestamp", Date>;
type WhenOrNull = Of<"timestamp", Date, true>;
type Stamp = Of<"timestamp", Date, false, true>;
type FlagOrNull = Of<"boolean", boolean, true, true>;

export type AuthUserColumns = {
  id: Id;
  name: Text;
  email: Text;
  emailVerified: Of<"boolean", boolean, false, true>;
  image: TextOrNull;
  createdAt: Stamp;
  updatedAt: Stamp;
  role: TextOrNull;
  banned: FlagOrNull;
  banReason: TextOrNull;
  banExpires: WhenOrNull;
};

export type AuthSessionColumns = {
  id: Id;
  expiresAt: When;
  token: Text;
  createdAt: Stamp;
  updatedAt: Stamp;
  ipAddress: TextOrNull;
  userAgent: TextOrNull;
  userId: Text;
  impersonatedBy: TextOrNull;
};

export type AuthAccountColumns = {
  id: Id;
  accountId: Text;
  providerId: Text;
  userId: Text;
  accessToken: TextOrNull;
  refreshToken: TextOrNull;
  idToken: TextOrNull;
  accessTokenExpiresAt: WhenOrNull;
  refreshTokenExpiresAt: WhenOrNull;
  scope: TextOrNull;
  password: TextOrNull;
  createdAt: Stamp;
  updatedAt: Stamp;
};

export type AuthVerificationColumns = {
  id: Id;
  identifier: Text;
  value: Text;
  expiresAt: When;
  createdAt: Stamp;
  updatedAt: Stamp;
};

export type ApiKeyColumns = {
  id: Id;
  configId: Of<"text", string, false, true>;
  name: TextOrNull;
  start: TextOrNull;
  referenceId: Text;
  prefix: TextOrNull;
  key: Text;
  refillInterval: IntOrNull;
  refillAmount: IntOrNull;
  lastRefillAt: WhenOrNull;
  enabled: FlagOrNull;
  rateLimitEnabled: FlagOrNull;
  rateLimitTimeWindow: Of<"integer", number, true, true>;
  rateLimitMax: Of<"integer", number, true, true>;
  requestCount: Of<"integer", number, true, true>;
  remaining: IntOrNull;
  lastRequest: WhenOrNull;
  expiresAt: WhenOrNull;
  createdAt: Stamp;
  updatedAt: Stamp;
  permissions: TextOrNull;
  metadata: TextOrNull;
};

const id = (b: ColumnBuilder) => b.text().primaryKey();
const userId = (b: ColumnBuilder) => b.text().references("user", "id", { onDelete: "cascade" }).index();

const user = (b: ColumnBuilder): ColumnsOf<AuthUserColumns> => ({
  id: id(b),
  name: b.text(),
  email: b.text().unique(),
  emailVerified: b.boolean().default(false),
  image: b.text().nullable(),
  ...timestamps(b),
  role: b.text().nullable(),
  banned: b.boolean().nullable().default(false),
  banReason: b.text().nullable(),
  banExpires: b.timestamp().nullable(),
});

const session = (b: ColumnBuilder): ColumnsOf<AuthSessionColumns> => ({
  id: id(b),
  expiresAt: b.timestamp(),
  token: b.text().unique().secret(),
  ...timestamps(b),
  ipAddress: b.text().nullable(),
  userAgent: b.text().nullable(),
  userId: userId(b),
  impersonatedBy: b.text().nullable(),
});

const account = (b: ColumnBuilder): ColumnsOf<AuthAccountColumns> => ({
  id: id(b),
  accountId: b.text(),
  providerId: b.text(),
  userId: userId(b),
  accessToken: b.text().nullable().secret(),
  refreshToken: b.text().nullable().secret(),
  idToken: b.text().nullable().secret(),
  accessTokenExpiresAt: b.timestamp().nullable(),
  refreshTokenExpiresAt: b.timestamp().nullable(),
  scope: b.text().nullable(),
  password: b.text().nullable().secret(),
  ...timestamps(b),
});

const verification = (b: ColumnBuilder): ColumnsOf<AuthVerificationColumns> => ({
  id: id(b),
  identifier: b.text().index().secret(),
  value: b.text().secret(),
  expiresAt: b.timestamp(),
  ...timestamps(b),
});

/**
 * `referenceId` has no foreign key: the plugin may point it at a user or at an organization. The
 * rate-limit defaults are the plugin's own (10 requests per 24 hours).
 */
const apikey = (b: ColumnBuilder): ColumnsOf<ApiKeyColumns> => ({
  id: id(b),
  configId: b.text().default("default").index(),
  name: b.text().nullable(),
  start: b.text().nullable(),
  referenceId: b.text().index(),
  prefix: b.text().nullable(),
  key: b.text().index().secret(),
  refillInterval: b.integer().nullable(),
  refillAmount: b.integer().nullable(),
  lastRefillAt: b.timestamp().nullable(),
  enabled: b.boolean().nullable().default(true),
  rateLimitEnabled: b.boolean().nullable().default(true),
  rateLimitTimeWindow: b.integer().nullable().default(86_400_000),
  rateLimitMax: b.integer().nullable().default(10),
  requestCount: b.integer().nullable().default(0),
  remaining: b.integer().nullable(),
  lastRequest: b.timestamp().nullable(),
  expiresAt: b.timestamp().nullable(),
  ...timestamps(b),
  permissions: b.text().nullable(),
  metadata: b.text().nullable(),
});

/** The column states `.auth()` adds; `apikey` comes separately, with `apiKeys: true`. */
export type AuthTables = {
  user: AuthUserColumns;
  session: AuthSessionColumns;
  account: AuthAccountColumns;
  verification: AuthVerificationColumns;
};

export type ApiKeyTables = {
  apikey: ApiKeyColumns;
};

export type AuthRelations = {
  user: { sessions: RelationState<"hasMany", "session">; accounts: RelationState<"hasMany", "account"> };
  session: { user: RelationState<"belongsTo", "user"> };
  account: { user: RelationState<"belongsTo", "user"> };
};

/** The auth tables' column models, in better-auth's field order. */
export function authTables(apiKeys: boolean): Record<string, ColumnModels> {
  const tables: Record<string, ColumnModels> = {
    user: columnModels(user(t)),
    session: columnModels(session(t)),
    account: columnModels(account(t)),
    verification: columnModels(verification(t)),
  };
  if (apiKeys) tables.apikey = columnModels(apikey(t));
  return tables;
}

export function authRelations(): Record<string, Record<string, RelationDef>> {
  return {
    user: {
      sessions: rel.hasMany("session", { from: "id", to: "userId" }),
      accounts: rel.hasMany("account", { from: "id", to: "userId" }),
    },
    session: { user: rel.belongsTo("user", { from: "userId", to: "id" }) },
    account: { user: rel.belongsTo("user", { from: "userId", to: "id" }) },
  };
}

import type { BetterAuthOptions } from "better-auth";
import { processEnv } from "../../kernel/index.js";
import { CLIENT_ADDRESS_HEADER } from "./client-address.js";
import { servedLoopbackOrigin } from "./served-origin.js";
import type { OidcConfig } from "./oidc.js";
import type { AuthPagesConfig } from "./pages/options.js";

/**
 * The auth library's options minus `database`, which Trellis wires to the app's own Kysely instance
 * and the tables of `schema().auth()`.
 */
export interface AuthConfig extends Omit<BetterAuthOptions, "database" | "secret">, OidcConfig, AuthPagesConfig {
  /** Signs and encrypts sessions, cookies and tokens: at least 32 random characters in production. */
  secret: string;
}

/** What the facade knows about the app that the auth library needs. */
export interface AuthAppOptions {
  baseUrl?: string;
  /** The app's display name: the issuer authenticator apps show, the passkey relying party's name. */
  name?: string;
  /** `cors.origins`: always trusted, whatever the call order (never `*`). */
  corsOrigins?: readonly string[];
  /**
   * Roles the admin plugin treats as admins.
   * @default ["admin"]
   */
  adminRoles?: readonly string[];
}

/** better-auth's options for this app: origins merged, admin (and API-key) plugins added once. */
export function authOptions(
  config: AuthConfig,
  app: AuthAppOptions,
  database: BetterAuthOptions["database"],
  extraPlugins: NonNullable<BetterAuthOptions["plugins"]>,
): BetterAuthOptions {
  const configured = config.trustedOrigins;
  const cors = (app.corsOrigins ?? []).filter((origin) => origin !== "*");
  const fixed = typeof configured === "function" ? cors : [...new Set([...cors, ...(configured ?? [])])];
  // Outside production the loopback address a request reached is trusted too (a changed PORT).
  const served = processEnv().NODE_ENV === "production" ? undefined : servedLoopbackOrigin;
  const trustedOrigins =
    typeof configured === "function" || served
      ? async (request?: Request) => [...fixed, ...(typeof configured === "function" ? await configured(request) : []), ...(served?.(request) ?? [])]
      : fixed;
  const own = config.plugins ?? [];
  const plugins = [...own, ...extraPlugins.filter((plugin) => !own.some((existing) => existing.id === plugin.id))];
  return {
    ...config,
    emailAndPassword: config.emailAndPassword && withSyntheticRole(config.emailAndPassword, plugins),
    baseURL: config.baseURL ?? app.baseUrl,
    trustedOrigins,
    plugins,
    database,
    // Identifiers carry reset and sign-in tokens (`reset-password:<token>`): stored as SHA-256, a
    // copy of the table (an export, a backup, an admin's screen) hands out no live token.
    verification: { ...config.verification, storeIdentifier: config.verification?.storeIdentifier ?? "hashed" },
    advanced: {
      ...config.advanced,
      // The library turns its origin and callback-URL checks off when NODE_ENV is "test" or TEST is
      // set (every test runner): on unless the app turns them off itself, so an app's tests run with
      // the checks it has in production.
      disableOriginCheck: config.advanced?.disableOriginCheck ?? false,
      // The schema is Trellis' own and migrated before the first request; better-auth's start-up
      // check would race the migration and report a false mismatch.
      database: { ...config.advanced?.database, validateSchema: false } as never,
      // One client-address rule for the whole app: the library reads the address Trellis decided
      // (already resolved through `trustProxy`, so no proxy list of its own applies).
      ipAddress: { ...config.advanced?.ipAddress, ipAddressHeaders: [CLIENT_ADDRESS_HEADER], trustedProxies: undefined },
    },
  };
}

type EmailAndPassword = NonNullable<BetterAuthOptions["emailAndPassword"]>;

/**
 * When sign-up must not reveal taken addresses (email verification required, or no auto sign-in),
 * the library answers a taken address with a made-up user. It lacks the role the admin plugin gives
 * a real one on create (`role: null` against `"user"`), which tells the two apart: the made-up user
 * gets the same default role. An integrator's own `customSyntheticUser` is kept.
 */
function withSyntheticRole(given: EmailAndPassword, plugins: NonNullable<BetterAuthOptions["plugins"]>): EmailAndPassword {
  if (given.customSyntheticUser) return given;
  const admin = plugins.find((plugin) => plugin.id === "admin") as { options?: { defaultRole?: string } } | undefined;
  if (!admin) return given;
  const role = admin.options?.defaultRole ?? "user";
  return { ...given, customSyntheticUser: ({ coreFields, additionalFields, id }) => ({ ...coreFields, role, ...additionalFields, id }) };
}

import { betterAuth, type BetterAuthOptions } from "better-auth";
import { isAPIError } from "better-auth/api";
import { admin } from "better-auth/plugins/admin";
import { RpcError, TrellisError, definePlugin, installLine, missingPeers, processEnv, type AppPlugin, type SealedApp, type SessionState } from "../../kernel/index.js";
import { authOptions, type AuthAppOptions, type AuthConfig } from "./options.js";
import { originCheck, trustedOrigins } from "./origin-check.js";
import { missingAuthColumns } from "./schema-check.js";
import { SIGNED_OUT, sessionLookup } from "./session-lookup.js";
import { withoutBannedCredentials } from "./ban-guard.js";
import { correctClientAddress, withClientAddress } from "./client-address.js";
import { assertNoNul } from "./nul-check.js";
import { failureReporter } from "./failure-report.js";
import { explainedOriginRefusal } from "./served-origin.js";
import { authExtensions, type AuthExtensions } from "./extensions.js";
import { flagHint, missingSignInPeers, signInPlugins } from "./sign-in-methods.js";
import { oidcPlugins } from "./oidc.js";
import { landOnPages, landings, pageRoutes, pagesSettings, signInMethods } from "./pages/index.js";
import { AUTH_SCHEMA_INCOMPLETE, AUTH_PEER_MISSING, AUTH_SCHEMA_MISSING, AUTH_SECRET_MISSING, AUTH_SECRET_TOO_SHORT } from "./errors.js";

export type { AuthConfig, AuthAppOptions } from "./options.js";
export type { OidcProvider } from "./oidc.js";
export type { AuthExtensions } from "./extensions.js";

declare module "../../kernel/index.js" {
  interface AppServices {
    /** The better-auth instance, once the app is ready; also `context.auth`. */
    auth: AuthInstance;
    /** Adds to the auth library's options from another plugin's `build` (see docs/auth.md). */
    "auth-options": AuthExtensions;
  }
}

const API_KEY_PACKAGE = "@better-auth/api-key";

/** The instance type is kept opaque at the package boundary (better-auth's inferred type is huge). */
export type AuthInstance = {
  handler(request: Request): Promise<Response>;
  api: Record<string, any>;
  options: BetterAuthOptions;
  $context: Promise<any>;
};

/**
 * better-auth at `/api/auth/**`, on the app's own Kysely instance. Stage `identity`: it taps the
 * kernel's session hook, so every feature after it reads `context.user` from one lookup per request.
 * The instance is created in the `ready` hook because the API-key plugin is an optional peer that
 * can only be loaded asynchronously; its presence is checked synchronously at build.
 */
export function authPlugin(config: AuthConfig, app: AuthAppOptions = {}): AppPlugin {
  let instance: AuthInstance | undefined;
  return definePlugin({
    name: "auth",
    stage: "identity",
    provides: ["session", "auth", "auth-options"],
    validate(ctx) {
      if (!config?.secret) throw fail(AUTH_SECRET_MISSING, ".auth() needs a secret: at least 32 random characters, read from the environment (AUTH_SECRET), never written in the code");
      if (!ctx.schema.auth) {
        throw fail(AUTH_SCHEMA_MISSING, '.auth() needs the auth tables: call .auth() on the schema (schema("1").auth())');
      }
      const missing = missingAuthColumns({ ...config, plugins: [...(config.plugins ?? []), admin()] } as BetterAuthOptions, ctx.schema);
      if (missing.length > 0) {
        throw fail(
          AUTH_SCHEMA_INCOMPLETE,
          `The auth library (with its plugins) needs what the schema lacks: ${missing.join(", ")}. Declare them with .table(...) in the schema${flagHint(missing)}`,
        );
      }
      if (ctx.schema.auth.apiKeys && missingPeers([API_KEY_PACKAGE]).length > 0) {
        throw fail(AUTH_PEER_MISSING, `The schema asks for API keys, so install the optional peer "${API_KEY_PACKAGE}": ${installLine([API_KEY_PACKAGE])}`);
      }
      const signInPeers = missingSignInPeers(ctx.schema.auth);
      if (signInPeers) throw fail(AUTH_PEER_MISSING, signInPeers);
      const env = processEnv();
      if (config.secret.length < 32) {
        // Anyone who guesses a short secret forges sessions: refused where it matters, warned elsewhere.
        if (env.NODE_ENV === "production") {
          throw fail(AUTH_SECRET_TOO_SHORT, `.auth() got a secret of ${config.secret.length} characters; production needs at least 32 random characters (AUTH_SECRET)`);
        }
        if (!env.VITEST && env.NODE_ENV !== "test") console.warn("[trellis] auth: the secret is shorter than 32 characters; use a long random value in production");
      }
    },
    build(ctx) {
      const { db, kind } = ctx.resources;
      let sealed: SealedApp | undefined;
      ctx.hooks.sealed.tap((app) => (sealed = app));
      // A failure while close() runs is the shutdown (answered 503 by the kernel), not a bug.
      const reporter = failureReporter((error, event) => sealed?.state() !== "closed" && ctx.report(error, "route", event));
      const wantsApiKeys = ctx.schema.auth?.apiKeys ?? false;
      const pages = pagesSettings(config.pages);
      // Plugins that build after this one (mail) add their callbacks here before the library exists.
      const extensions = authExtensions(pages && landings(pages));
      ctx.provide("auth-options", extensions);
      ctx.hooks.ready.tap(async () => {
        extensions.seal();
        const extra: NonNullable<BetterAuthOptions["plugins"]> = [admin({ adminRoles: [...(app.adminRoles ?? ["admin"])] })];
        if (wantsApiKeys) {
          const { apiKey } = await import(API_KEY_PACKAGE);
          // A valid `x-api-key` resolves to its user's session like a cookie does. The plugin's own
          // per-key limit (10 a day by default) is off: the app's rate limit applies instead. Pass
          // your own apiKey() in `plugins` to configure it differently.
          extra.push(apiKey({ enableSessionForAPIKeys: true, rateLimit: { enabled: false } }));
        }
        // Two-factor, passkeys and SSO: on when the schema declares their tables.
        if (ctx.schema.auth) extra.push(...(await signInPlugins(ctx.schema.auth, typeof config.baseURL === "string" ? config.baseURL : app.baseUrl, app.name, app.adminRoles ?? ["admin"])));
        const { oidc, pages: _pages, ...own } = config;
        extra.push(...(await oidcPlugins(oidc)));
        const reported = { ...own, onAPIError: reporter.options(config.onAPIError) };
        const options = extensions.apply(authOptions(reported, app, { db, type: kind }, extra));
        instance = betterAuth(pages ? landOnPages(options, pages) : options) as unknown as AuthInstance;
        ctx.provide("auth", instance, { context: true });
      });
      // A cached session may carry the user as they were: re-read the row so a ban applies at once.
      const lookup = sessionLookup(() => instance!, Boolean(config.secondaryStorage || config.session?.cookieCache?.enabled));
      ctx.hooks.session.tap(async (event): Promise<SessionState | undefined> => {
        let found;
        try {
          found = await lookup(event.headers);
        } catch (error) {
          // The library's own refusals (a wrong API key, say) keep their status. Its 500s (the
          // database failed under it) stay unexpected, so they are reported.
          throw refusal(error) ?? error;
        }
        // A banned user is signed out, whatever the credential. The answer is final (the hook bails):
        // no later session tap may resolve the same request to someone.
        return found === SIGNED_OUT ? { user: null, session: null } : found;
      });
      // What a procedure passes on to the library as `context.headers` names the decided client address.
      ctx.hooks.context.tap((_context, event) => {
        if (event) correctClientAddress(event);
      });
      // The same rule wherever the library is called from: a procedure or route calling context.auth.api.
      ctx.hooks.error.tap((error) => refusal(error));
      const trusted = trustedOrigins(config.baseURL ?? app.baseUrl, app.corsOrigins, config.trustedOrigins);
      return {
        middleware: [originCheck(trusted, typeof config.trustedOrigins === "function" ? config.trustedOrigins : undefined)],
        routes: [
          ...(pages ? pageRoutes(pages, async () => signInMethods(instance!.options, (await instance!.$context).socialProviders)) : []),
          {
            method: "ALL",
            path: "/api/auth/**",
            // better-auth authenticates its own requests, so no Trellis context; but it does not check
            // bans, so a credentialed request is looked up once and a banned caller's credentials dropped.
            // It reads the client address from a header: the one Trellis decided is put there.
            context: false,
            handler: async (event) => {
              await assertNoNul(event);
              const request = withClientAddress(event, await withoutBannedCredentials(event.request, lookup));
              const response = await reporter.handle(event, () => instance!.handler(request));
              return explainedOriginRefusal(response, event.request, config.baseURL ?? app.baseUrl);
            },
          },
        ],
      };
    },
  });
}

function fail(code: string, message: string): TrellisError {
  return new TrellisError(code, message, { plugin: "auth", hook: "validate" });
}

/** The auth library's deliberate refusals (4xx) as an `RpcError` with the same status. */
function refusal(error: unknown): RpcError<any, any> | undefined {
  if (!isAPIError(error) || error.statusCode >= 500) return undefined;
  return new RpcError(String(error.status), { status: error.statusCode, message: error.message });
}

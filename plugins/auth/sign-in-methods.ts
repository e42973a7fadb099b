import type { BetterAuthPlugin } from "better-auth";
import { hasRole, installLine, missingPeers, type SchemaModel } from "../../kernel/index.js";

type Plugins = BetterAuthPlugin[];
type Flags = NonNullable<SchemaModel["auth"]>;

const PEERS = { passkeys: "@better-auth/passkey", sso: "@better-auth/sso" } as const;

/** The optional peers the schema's flags call for but the app lacks, as a sentence, or undefined. */
export function missingSignInPeers(flags: Flags): string | undefined {
  const wanted = (Object.keys(PEERS) as (keyof typeof PEERS)[]).filter((flag) => flags[flag]).map((flag) => PEERS[flag]);
  const missing = missingPeers(wanted);
  if (missing.length === 0) return undefined;
  return `The schema asks for ${missing.map((name) => `"${name}"`).join(" and ")}: ${installLine(missing)}`;
}

/**
 * The library plugins for the sign-in methods whose tables the schema declares
 * (`.auth({ twoFactor, passkeys, sso })`); a method the app configures itself in `plugins` is left
 * to it (the caller drops ours by id). Loaded in the `ready` hook: passkeys and SSO are optional peers.
 */
export async function signInPlugins(flags: Flags, baseUrl: string | undefined, appName: string | undefined, adminRoles: readonly string[]): Promise<Plugins> {
  const plugins: Plugins = [];
  if (flags.twoFactor) {
    const { twoFactor } = await import("better-auth/plugins/two-factor");
    // The issuer is the name authenticator apps show beside the code.
    plugins.push(twoFactor({ issuer: appName ?? hostOf(baseUrl) ?? "Trellis" }));
  }
  if (flags.passkeys) {
    const { passkey } = await import(PEERS.passkeys);
    // Without an origin the plugin accepts whatever Origin header the request carried: the
    // credential is bound to the app's public origin instead, and its host is the relying party.
    const origin = baseUrl ? new URL(baseUrl).origin : undefined;
    plugins.push(passkey({ rpName: appName ?? hostOf(baseUrl) ?? "Trellis", ...(origin && { origin, rpID: new URL(origin).hostname }) }));
  }
  if (flags.sso) {
    const { sso } = await import(PEERS.sso);
    // The library lets any signed-in user register up to ten providers, each claiming email
    // domains: only admins may (the library's own limit of ten each), everyone else is refused (403).
    plugins.push(sso({ providersLimit: (user: { role?: string | null }) => (hasRole(user, adminRoles) ? 10 : 0) }));
  }
  return plugins;
}

function hostOf(baseUrl: string | undefined): string | undefined {
  try {
    return baseUrl ? new URL(baseUrl).hostname : undefined;
  } catch {
    return undefined;
  }
}

const FLAG_OF_TABLE: Record<string, string> = { twoFactor: "twoFactor", "user.twoFactorEnabled": "twoFactor", passkey: "passkeys", ssoProvider: "sso" };

/** For missing tables a schema flag declares: the flags that would, as a sentence to append. */
export function flagHint(missing: readonly string[]): string {
  const flags = [...new Set(missing.map((entry) => FLAG_OF_TABLE[entry.replace(/^table "(.*)"$/, "$1")]).filter(Boolean))];
  return flags.length ? `, or let .auth() on the schema declare them: schema(...).auth({ ${flags.map((flag) => `${flag}: true`).join(", ")} })` : "";
}

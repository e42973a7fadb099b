import type { BetterAuthOptions } from "better-auth";

/** The sign-in methods the library was configured with, as the sign-in page offers them. */
export interface SignInMethods {
  password: boolean;
  /** Social and OpenID Connect providers: `POST /api/auth/sign-in/social { provider }`. */
  providers: { id: string; name: string }[];
  passkey: boolean;
  magicLink: boolean;
  twoFactor: boolean;
}

const NAMES: Record<string, string> = { github: "GitHub", google: "Google", gitlab: "GitLab", microsoft: "Microsoft", apple: "Apple", discord: "Discord" };

export function signInMethods(options: BetterAuthOptions): SignInMethods {
  const plugins = options.plugins ?? [];
  const has = (id: string) => plugins.some((plugin) => plugin.id === id);
  const social = Object.entries(options.socialProviders ?? {})
    .filter(([, provider]) => provider && (provider as { enabled?: boolean }).enabled !== false)
    .map(([id]) => ({ id, name: NAMES[id] ?? id }));
  const generic = plugins.find((plugin) => plugin.id === "generic-oauth") as { options?: { config?: { providerId: string; name?: string }[] } } | undefined;
  const oidc = (generic?.options?.config ?? []).map((provider) => ({ id: provider.providerId, name: provider.name ?? provider.providerId }));
  return {
    password: options.emailAndPassword?.enabled === true,
    providers: [...social, ...oidc],
    passkey: has("passkey"),
    magicLink: has("magic-link"),
    twoFactor: has("two-factor"),
  };
}

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

/**
 * `providers` are the library's own list once it started: social providers not turned off
 * (`enabled: false`) and OpenID Connect providers whose discovery succeeded, so the page offers no
 * button that cannot work.
 */
export function signInMethods(options: BetterAuthOptions, providers: readonly { id: string; name?: string }[]): SignInMethods {
  const plugins = options.plugins ?? [];
  const has = (id: string) => plugins.some((plugin) => plugin.id === id);
  return {
    password: options.emailAndPassword?.enabled === true,
    providers: providers.map((provider) => ({ id: provider.id, name: provider.name ?? provider.id })),
    passkey: has("passkey"),
    magicLink: has("magic-link"),
    twoFactor: has("two-factor"),
  };
}

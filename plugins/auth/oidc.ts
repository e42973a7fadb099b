import type { BetterAuthOptions } from "better-auth";

/** An OpenID Connect provider users sign in with (Keycloak, Auth0, Okta, Entra ID, Authentik, ...). */
export interface OidcProvider {
  /** The provider's name in Trellis' URLs: the redirect URI to register is `<baseUrl>/api/auth/callback/<id>`. */
  id: string;
  /** The issuer; its discovery document is read from `<issuer>/.well-known/openid-configuration` when the app starts. */
  issuer: string;
  clientId: string;
  /** Read from the environment, never written in the code. */
  clientSecret: string;
  /**
   * @default ["openid", "email", "profile"]
   */
  scopes?: string[];
  /** Shown on the sign-in page. @default id */
  name?: string;
}

export interface OidcConfig {
  /**
   * OpenID Connect providers, through better-auth's generic OAuth plugin, with PKCE, state and a
   * verified ID token (issuer, audience, signature, nonce) required. Sign in with
   * `POST /api/auth/sign-in/social { provider: id, callbackURL }`, as a social provider.
   * @default []
   */
  oidc?: readonly OidcProvider[];
}

/** The generic OAuth plugin for the configured providers, or nothing when there are none. */
export async function oidcPlugins(providers: readonly OidcProvider[] | undefined): Promise<NonNullable<BetterAuthOptions["plugins"]>> {
  if (!providers?.length) return [];
  const { genericOAuth } = await import("better-auth/plugins/generic-oauth");
  return [
    genericOAuth({
      config: providers.map((provider) => ({
        providerId: provider.id,
        name: provider.name ?? provider.id,
        discoveryUrl: `${provider.issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`,
        clientId: provider.clientId,
        clientSecret: provider.clientSecret,
        scopes: provider.scopes ?? ["openid", "email", "profile"],
        pkce: true,
        // Identity comes from the ID token: one that cannot be verified is no sign-in.
        requireIdTokenVerification: true,
      })),
    }),
  ];
}

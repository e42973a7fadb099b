// An OpenID Connect provider on a loopback port: `oidc-provider` (the certified Node implementation),
// with one confidential client and PKCE required. Its login and consent step is scripted by the test:
// `next(...)` says who signs in at the next interaction, or that the user cancels.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

export interface OidcAccount {
  sub: string;
  email: string;
  email_verified: boolean;
  name?: string;
}

export interface OidcServer {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** What the next interaction does: sign this account in, or end with the given OAuth error. */
  next(step: { account: OidcAccount } | { error: string; description?: string }): void;
  /** Requests the provider's token endpoint answered, for replay checks. */
  readonly tokenRequests: { status: number }[];
  close(): Promise<void>;
}

export async function startOidcServer(redirectUris: string[]): Promise<OidcServer> {
  const accounts = new Map<string, OidcAccount>();
  let step: Parameters<OidcServer["next"]>[0] | undefined;
  const tokenRequests: { status: number }[] = [];
  const clientId = "trellis-app";
  const clientSecret = "a-client-secret-for-the-loopback-provider";
  let server!: Server;
  await new Promise<void>((resolve) => {
    server = createServer();
    server.listen(0, "127.0.0.1", resolve);
  });
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: redirectUris,
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_basic",
      },
    ],
    pkce: { required: () => true },
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
    findAccount: async (_ctx: unknown, sub: string) => {
      const account = accounts.get(sub);
      return account && { accountId: sub, claims: async () => ({ ...account }) };
    },
    // Every scope the client asks for is granted: consent is scripted through `next`, not a form.
    loadExistingGrant: async (ctx: any) => {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope("openid email profile");
      await grant.save();
      return grant;
    },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    cookies: { keys: ["a-cookie-key-for-the-loopback-provider"] },
    features: { devInteractions: { enabled: false } },
  } as never);
  const handle = provider.callback();
  server.on("request", async (req: IncomingMessage, res: ServerResponse) => {
    try {
      if (req.url?.startsWith("/interaction/")) {
        const current = step;
        step = undefined;
        if (!current) throw new Error("the test scripted no interaction");
        if ("error" in current) {
          await provider.interactionFinished(req, res, { error: current.error, error_description: current.description ?? "End-User aborted interaction" }, { mergeWithLastSubmission: false });
          return;
        }
        accounts.set(current.account.sub, current.account);
        await provider.interactionFinished(req, res, { login: { accountId: current.account.sub } }, { mergeWithLastSubmission: false });
        return;
      }
      if (req.url?.startsWith("/token")) res.on("finish", () => tokenRequests.push({ status: res.statusCode }));
      handle(req, res);
    } catch (error) {
      res.statusCode = 500;
      res.end(String(error));
    }
  });
  return {
    issuer,
    clientId,
    clientSecret,
    next: (given) => void (step = given),
    tokenRequests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

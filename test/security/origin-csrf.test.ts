// Origin and CSRF: which state-changing requests a browser can be made to send with the user's cookie.
import Database from "better-sqlite3";
import type { SqliteDatabase } from "kysely";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { sqliteDialect } from "../../kernel/db/dialect/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { serve, type RunningServer } from "../../presets/node.js";
import { rpc } from "../support/app.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";
const SPA = "https://spa.example.com";
const v1 = schema("1").auth().build();

function createApp() {
  const database = new Database(":memory:") as unknown as SqliteDatabase;
  return new App({ baseUrl: ORIGIN, db: { dialect: sqliteDialect({ database }), kind: "sqlite" }, cors: { origins: [SPA], credentials: true } })
    .schema(v1)
    // better-auth turns its own origin check off under NODE_ENV=test; on here, as in production.
    .auth({ secret: SECRET, emailAndPassword: { enabled: true }, advanced: { disableOriginCheck: false } })
    .procedure("me", (base) => base.handler(({ context }) => context.user!.id), { permission: "authenticated" })
    .route("POST", "/hooks/rename", async (_event, context) => ({ by: context.user?.id ?? null }))
    .route("GET", "/hooks/who", async (_event, context) => ({ by: context.user?.id ?? null }));
}

type Built = Awaited<ReturnType<ReturnType<typeof createApp>["start"]>>;

describe("origin and CSRF", () => {
  let app: Built;
  let ada: SignedIn;
  beforeAll(async () => {
    app = await createApp().start();
    ada = await signUp(app, "ada@example.test");
  });
  afterAll(() => app?.close());

  /** A cookie-bearing POST to each kind of path, with the given browser headers. */
  const post = async (headers: Record<string, string>) => ({
    rpc: (await rpc(app, "me", undefined, { cookie: ada.cookie, ...headers })).status,
    route: (await app.handle(new Request(`${ORIGIN}/hooks/rename`, { method: "POST", headers: { cookie: ada.cookie, ...headers } }))).status,
    auth: (
      await app.handle(
        new Request(`${ORIGIN}/api/auth/update-user`, {
          method: "POST",
          headers: { cookie: ada.cookie, "content-type": "application/json", ...headers },
          body: JSON.stringify({ name: "renamed" }),
        }),
      )
    ).status,
  });
  const refused = { rpc: 403, route: 403, auth: 403 };
  const passed = { rpc: 200, route: 200, auth: 200 };
  /** Trellis lets an Origin-less request through; better-auth's own check refuses it on /api/auth/**. */
  const originless = { rpc: 200, route: 200, auth: 403 };

  describe("the browser's Sec-Fetch-Site", () => {
    it("refuses a cross-site cookie request that carries no Origin, on every path", async () => {
      expect(await post({ "sec-fetch-site": "cross-site" })).toEqual(refused);
      const body = (await rpc(app, "me", undefined, { cookie: ada.cookie, "sec-fetch-site": "cross-site" })).body;
      expect(body).toMatchObject({ code: "FORBIDDEN", message: "A cross-site request (Sec-Fetch-Site: cross-site) without a trusted Origin cannot use cookies" });
    });

    it("refuses a cross-site cookie request from an untrusted or opaque origin", async () => {
      expect(await post({ "sec-fetch-site": "cross-site", origin: "https://evil.example" })).toEqual(refused);
      expect(await post({ "sec-fetch-site": "cross-site", origin: "null" })).toEqual(refused);
      expect(await post({ "sec-fetch-site": "Cross-Site" })).toEqual(refused);
    });

    it("lets a cross-site origin the app lists (cors.origins with credentials) through", async () => {
      expect(await post({ "sec-fetch-site": "cross-site", origin: SPA })).toEqual(passed);
    });

    it("never blocks safe methods or requests without a cookie", async () => {
      const get = await app.handle(new Request(`${ORIGIN}/hooks/who`, { headers: { cookie: ada.cookie, "sec-fetch-site": "cross-site" } }));
      expect(get.status).toBe(200);
      const anonymous = await app.handle(new Request(`${ORIGIN}/hooks/rename`, { method: "POST", headers: { "sec-fetch-site": "cross-site" } }));
      expect(await anonymous.json()).toEqual({ by: null });
    });
  });

  describe("what keeps working (these already hold)", () => {
    it("lets non-browser clients, which send neither Origin nor Sec-Fetch-Site, use the cookie outside /api/auth/**", async () => {
      expect(await post({})).toEqual(originless);
      expect(await post({ origin: ORIGIN })).toEqual(passed);
    });

    it("lets same-origin and same-site browser requests through; /api/auth/** wants their Origin", async () => {
      expect(await post({ "sec-fetch-site": "same-origin", origin: ORIGIN })).toEqual(passed);
      expect(await post({ "sec-fetch-site": "same-origin" })).toEqual(originless);
      expect(await post({ "sec-fetch-site": "same-site" })).toEqual(originless);
    });

    it("refuses an untrusted Origin whatever Sec-Fetch-Site claims", async () => {
      expect(await post({ origin: "https://evil.example" })).toEqual(refused);
      expect(await post({ origin: "https://evil.example", "sec-fetch-site": "same-origin" })).toEqual(refused);
      expect(await post({ origin: `${SPA}.evil.example` })).toEqual(refused);
    });
  });

  describe("served at another port than baseUrl's (PORT=4100, baseUrl http://localhost:3000)", () => {
    const signUpAt = (target: Built, url: string, origin: string) =>
      target.handle(
        new Request(`${url}/api/auth/sign-up/email`, {
          method: "POST",
          headers: { origin, "content-type": "application/json" },
          body: JSON.stringify({ email: `${Math.random().toString(36).slice(2)}@example.test`, password: "a-long-enough-password", name: "New" }),
        }),
      );

    it("in development, trusts the loopback address the request reached as its own origin", async () => {
      for (const url of ["http://localhost:4100", "http://127.0.0.1:4100", "http://[::1]:4100"]) {
        const response = await signUpAt(app, url, url);
        expect(response.status, `${url}: ${await response.clone().text()}`).toBe(200);
      }
      // Only the address the request reached: another port, or another host, stays foreign.
      expect((await signUpAt(app, "http://localhost:4100", "http://localhost:4200")).status).toBe(403);
      expect((await signUpAt(app, "http://evil.example:4100", "http://evil.example:4100")).status).toBe(403);
    });

    it("names baseUrl and APP_BASE_URL when the auth library refuses the origin", async () => {
      const response = await signUpAt(app, "http://192.168.1.20:4100", "http://192.168.1.20:4100");
      expect(response.status).toBe(403);
      const body = (await response.json()) as { code: string; message: string };
      expect(body.code).toBe("INVALID_ORIGIN");
      expect(body.message).toContain("Origin http://192.168.1.20:4100 is not trusted");
      expect(body.message).toContain(`baseUrl is ${ORIGIN}`);
      expect(body.message).toContain("APP_BASE_URL");
    });

    it("in production trusts only baseUrl and the listed origins", async () => {
      vi.stubEnv("NODE_ENV", "production");
      const production = await createApp().start();
      vi.unstubAllEnvs();
      try {
        const response = await signUpAt(production, "http://localhost:4100", "http://localhost:4100");
        expect(response.status).toBe(403);
        expect(((await response.json()) as { message: string }).message).toContain("APP_BASE_URL");
        expect((await signUpAt(production, ORIGIN, ORIGIN)).status).toBe(200);
      } finally {
        await production.close();
      }
    });
  });

  describe("over a real port", () => {
    let server: RunningServer;
    beforeAll(async () => {
      server = await serve(app, { port: 0, hostname: "127.0.0.1", handleSignals: false });
    });
    afterAll(async () => {
      // The app itself is closed by the outer afterAll; closing twice is harmless.
      await server?.close();
    });

    it("refuses the cross-site form post a hostile page would make, and lets the same post through without the signal", async () => {
      const send = (headers: Record<string, string>) =>
        fetch(`${server.url}/rpc/me`, { method: "POST", headers: { cookie: ada.cookie, "content-type": "application/json", ...headers }, body: "{}" });
      const hostile = await send({ "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate" });
      expect(hostile.status).toBe(403);
      expect((await send({})).status).toBe(200);
    });
  });
});

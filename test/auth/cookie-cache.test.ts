import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { embedded } from "../../kernel/embedded/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { rpc } from "../support/app.js";
import { ORIGIN, cookieOf, signUp } from "../support/auth.js";

const v1 = schema("1").auth().build();
// Long enough that the delete and the call after priming come before it ends on a busy machine.
const MAX_AGE_SECONDS = 3;

/**
 * With better-auth's cookie cache on, a session is read from a signed cookie instead of the
 * database until the cache's maxAge passes. Revocation (sign-out elsewhere, a ban) therefore takes
 * effect within maxAge for a client that keeps presenting the old cookies. This pins that window.
 */
describe("session cookie cache: the revocation window is maxAge", () => {
  let app: Awaited<ReturnType<typeof start>>;
  const start = () =>
    new App({ baseUrl: ORIGIN, db: embedded({ dataDir: "memory://" }) })
      .schema(v1)
      .auth({
        secret: "a-test-secret-that-is-long-enough-0123456789",
        emailAndPassword: { enabled: true },
        session: { cookieCache: { enabled: true, maxAge: MAX_AGE_SECONDS } },
      })
      .procedure("me", (base) => base.handler(({ context }) => context.user!.id), { permission: "authenticated" })
      .start();
  beforeAll(async () => {
    app = await start();
  });
  afterAll(() => app?.close());

  it("keeps a revoked session's cached cookie valid at most maxAge, then refuses it", async () => {
    const user = await signUp(app, "cached@example.test");
    // Prime the cache: a getSession through the auth handler sets the session_data cookie.
    const primed = await app.handle(new Request(`${ORIGIN}/api/auth/get-session`, { headers: { cookie: user.cookie } }));
    const cookie = [user.cookie, cookieOf(primed)].filter(Boolean).join("; ");
    expect(cookie).toMatch(/session_data=/);

    await app.db.deleteFrom("session").where("userId", "=", user.userId).execute();
    expect((await rpc(app, "me", undefined, { cookie })).status).toBe(200);

    await new Promise((resolve) => setTimeout(resolve, MAX_AGE_SECONDS * 1000 + 300));
    expect((await rpc(app, "me", undefined, { cookie })).status).toBe(401);
  });
});

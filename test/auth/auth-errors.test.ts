import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { embedded } from "../../kernel/embedded/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { rpc } from "../support/app.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";

const v1 = schema("1").auth().build();

describe("auth library errors", () => {
  const reported: unknown[] = [];
  /** The library's own log lines, captured so each test can assert the ones it expects. */
  const logged: string[] = [];
  let app: Awaited<ReturnType<typeof start>>;
  let ada: SignedIn;
  const start = () =>
    new App({ baseUrl: ORIGIN, db: embedded({ dataDir: "memory://" }), onError: (error) => reported.push(error) })
      .schema(v1)
      .auth({
        secret: "a-test-secret-that-is-long-enough-0123456789",
        emailAndPassword: { enabled: true },
        logger: { log: (level, message, ...args) => logged.push(`${level} ${message} ${args.map(String).join(" ")}`.trim()) },
      })
      .procedure("login", (base) =>
        base.handler(async ({ context }) => {
          const auth = context.auth as { api: { signInEmail(args: unknown): Promise<unknown> } };
          return auth.api.signInEmail({ body: { email: "nobody@example.test", password: "wrong-password-123" } });
        }),
      )
      .procedure("me", (base) => base.handler(({ context }) => context.user!.id), { permission: "authenticated" })
      .start();
  beforeAll(async () => {
    app = await start();
    ada = await signUp(app, "ada@example.test");
  });
  afterAll(() => app?.close());

  it("keeps the status of the library's refusals inside procedures, without reporting them", async () => {
    const result = await rpc(app, "login");
    expect(result.status).toBe(401);
    expect(result.body).toMatchObject({ code: "UNAUTHORIZED" });
    expect(reported).toEqual([]);
    expect(logged.splice(0)).toEqual(["warn User not found"]);
  });

  it("answers a failing session lookup with a reported 500, never a silent anonymous caller", async () => {
    await sql`drop table "session" cascade`.execute(app.db);
    const result = await rpc(app, "me", undefined, { cookie: ada.cookie });
    expect(result.status).toBe(500);
    expect(result.body).toMatchObject({ code: "INTERNAL_SERVER_ERROR", message: "Internal server error" });
    expect(reported).toHaveLength(1);
    expect(logged.splice(0)).toEqual([expect.stringContaining('relation "session" does not exist')]);
  });
});

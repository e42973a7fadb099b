import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { embedded } from "../../kernel/embedded/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { request } from "../support/app.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";

/**
 * The auth library's own endpoints under `/api/auth/**`: input the database refuses is a 400 that
 * says what is wrong, every 500 reaches `onError`, and sign-up does not tell which addresses have
 * accounts when email verification is required.
 */
const v1 = schema("1").auth({ apiKeys: true }).build();
const SECRET = "a-test-secret-that-is-long-enough-0123456789";
const JSON_HEADERS = { "content-type": "application/json", origin: ORIGIN };

function post(app: { handle(request: Request): Promise<Response> }, path: string, body: unknown, cookie?: string) {
  return request(app, "POST", `/api/auth/${path}`, { headers: { ...JSON_HEADERS, ...(cookie ? { cookie } : {}) }, body: JSON.stringify(body) });
}

describe("auth endpoints: input the database refuses, and failures", () => {
  const reported: unknown[] = [];
  let app: Awaited<ReturnType<typeof start>>;
  let ada: SignedIn;
  const start = () =>
    new App({ baseUrl: ORIGIN, db: embedded({ dataDir: "memory://" }), onError: (error) => reported.push(error) })
      .schema(v1)
      .auth({ secret: SECRET, emailAndPassword: { enabled: true }, logger: { disabled: true } })
      .start();
  beforeAll(async () => {
    app = await start();
    ada = await signUp(app, "ada@example.test");
  }, 60_000);
  afterAll(() => app?.close());

  it.each([
    ["update-user", { name: "Ada\u0000" }, "name"],
    ["update-user", { image: "https://example.test/a\u0000.png" }, "image"],
    ["api-key/create", { name: "ci\u0000key" }, "name"],
    ["sign-up/email", { email: "nul@example.test", password: "correct-horse-battery-staple", name: "N\u0000" }, "name"],
  ])("%s with a NUL byte in %j: 400 naming the field, not reported", async (path, body, field) => {
    const answer = await post(app, path, body, ada.cookie);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: "BAD_REQUEST", message: `Invalid input: ${field}: must not contain a NUL character (\\u0000)` });
    expect(reported).toEqual([]);
  });

  it("a NUL byte elsewhere in a JSON string (escaped or nested) is refused the same way", async () => {
    const answer = await request(app, "POST", "/api/auth/update-user", { headers: { ...JSON_HEADERS, cookie: ada.cookie }, body: '{"name":"ok","x":{"y":["\\u0000"]}}' });
    expect(answer).toMatchObject({ status: 400, body: { message: expect.stringContaining("x.y.0: must not contain a NUL") } });
  });

  it("every 500 the library answers reaches onError, without internals in the body", async () => {
    await sql`alter table "user" rename to "user_gone"`.execute(app.db);
    try {
      const answer = await post(app, "sign-in/email", { email: "ada@example.test", password: "correct-horse-battery-staple" });
      expect(answer.status).toBe(500);
      expect(JSON.stringify(answer.body)).not.toContain("user_gone");
      expect(reported).toHaveLength(1);
      expect(String((reported[0] as Error).message)).toMatch(/relation "user" does not exist/);
    } finally {
      await sql`alter table "user_gone" rename to "user"`.execute(app.db);
      reported.length = 0;
    }
  });
});

describe("sign-up with email verification required: no account discovery", () => {
  let app: Awaited<ReturnType<typeof start>>;
  const start = () =>
    new App({ baseUrl: ORIGIN, db: embedded({ dataDir: "memory://" }), onError: () => {} })
      .schema(schema("1").auth().build())
      .auth({ secret: SECRET, emailAndPassword: { enabled: true, requireEmailVerification: true }, logger: { disabled: true } })
      .start();
  beforeAll(async () => {
    app = await start();
  }, 60_000);
  afterAll(() => app?.close());

  /** The answer with what must differ between two sign-ups (the generated id, the clock) blanked. */
  const shape = (answer: { status: number; body: any; headers: Headers }) => ({
    status: answer.status,
    cookies: answer.headers.getSetCookie().length,
    body: { ...answer.body, user: { ...answer.body.user, id: "<id>", createdAt: "<time>", updatedAt: "<time>" } },
  });

  it("answers a taken address exactly as a new one", async () => {
    const body = (email: string) => ({ email, password: "correct-horse-battery-staple", name: "Same" });
    const fresh = await post(app, "sign-up/email", body("first@example.test"));
    const taken = await post(app, "sign-up/email", body("first@example.test"));
    const another = await post(app, "sign-up/email", body("second@example.test"));
    expect(fresh.status).toBe(200);
    expect({ ...shape(taken), body: { ...shape(taken).body, user: { ...shape(taken).body.user, email: "<email>" } } }).toEqual({
      ...shape(another),
      body: { ...shape(another).body, user: { ...shape(another).body.user, email: "<email>" } },
    });
    expect(shape(taken).body.user).toMatchObject({ role: "user", emailVerified: false });
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { embedded } from "../../kernel/embedded/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { rpc } from "../support/app.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";

const v1 = schema("1").auth({ apiKeys: true }).build();

describe("API keys (schema().auth({ apiKeys: true }))", () => {
  const errors: unknown[] = [];
  let app: Awaited<ReturnType<typeof start>>;
  let ada: SignedIn;
  let key: string;
  const start = () =>
    new App({ baseUrl: ORIGIN, db: embedded({ dataDir: "memory://" }), onError: (error) => errors.push(error) })
      .schema(v1)
      .auth({ secret: "a-test-secret-that-is-long-enough-0123456789", emailAndPassword: { enabled: true } })
      .procedure("me", (base) => base.handler(({ context }) => context.user!.id), { permission: "authenticated" })
      .start();

  beforeAll(async () => {
    app = await start();
    ada = await signUp(app, "ada@example.test");
    const created = await app.handle(
      new Request(`${ORIGIN}/api/auth/api-key/create`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: ORIGIN, cookie: ada.cookie },
        body: JSON.stringify({ name: "ci" }),
      }),
    );
    expect(created.status).toBe(200);
    key = ((await created.json()) as { key: string }).key;
  });
  afterAll(() => app?.close());

  it("authenticates procedures with the x-api-key header, more than the library's default daily limit", async () => {
    for (let i = 0; i < 12; i++) expect((await rpc(app, "me", undefined, { "x-api-key": key })).body).toBe(ada.userId);
  });

  it("answers a wrong key with the library's 403, never a 500", async () => {
    const wrong = await rpc(app, "me", undefined, { "x-api-key": "not-a-real-key" });
    expect(wrong.status).toBe(403);
    expect(wrong.body).toMatchObject({ code: "FORBIDDEN", message: expect.stringMatching(/api key/i) });
    expect(errors).toEqual([]);
  });
});

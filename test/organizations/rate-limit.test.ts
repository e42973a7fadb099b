// rateLimit: { by: "organization" }: the members of an organization share one budget.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { testApp, type TestApp, type TestAppInput } from "../../presets/testing.js";

const v1 = schema("1").auth({ organizations: true }).build();

function createApp({ db, secret }: TestAppInput) {
  return new App({ db, baseUrl: "http://localhost:3000", rateLimit: { max: 3, windowMs: 60_000, by: "organization" } })
    .schema(v1)
    .auth({ secret, emailAndPassword: { enabled: true } })
    .procedure("ping", (base) => base.handler(() => "pong"));
}

const json = (body: unknown): RequestInit => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("rate limit by organization", () => {
  let t: TestApp<typeof createApp>;
  beforeAll(async () => void (t = await testApp(createApp)));
  afterAll(() => t?.close());

  it("counts every member of the active organization against one budget; others keep theirs", async () => {
    const ada = await t.signUp();
    const created = await ada.fetch("/api/auth/organization/create", json({ name: "Acme", slug: "acme" }));
    const org = ((await created.json()) as { id: string }).id;
    const bea = await t.signUp();
    await t.app.db.insertInto("member").values({ id: "m-bea", organizationId: org, userId: bea.user.id, role: "member" }).execute();
    expect((await bea.fetch("/api/auth/organization/set-active", json({ organizationId: org }))).status).toBe(200);
    const cy = await t.signUp();
    const ping = (who: typeof ada) => who.fetch("/rpc/ping", json({ json: {} }));
    expect((await ping(ada)).headers.get("ratelimit-remaining")).toBe("2");
    expect((await ping(bea)).headers.get("ratelimit-remaining")).toBe("1");
    expect((await ping(ada)).status).toBe(200);
    expect((await ping(bea)).status).toBe(429);
    // No active organization: counted as the user.
    expect((await ping(cy)).headers.get("ratelimit-remaining")).toBe("2");
  });
});

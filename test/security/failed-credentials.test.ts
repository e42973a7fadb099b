// Failed credentials are counted by client address, looked at before any lookup, so guessing API
// keys, bearer tokens or session cookies is throttled; a valid caller spends only its own budget.
import Database from "better-sqlite3";
import type { SqliteDatabase } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqliteDialect } from "../../kernel/db/dialect/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";
const v1 = schema("1").auth({ apiKeys: true }).build();

describe("failed credentials", () => {
  let app: any;
  let ada: SignedIn;
  beforeAll(async () => {
    const database = new Database(":memory:") as unknown as SqliteDatabase;
    app = await new App({ baseUrl: ORIGIN, db: { dialect: sqliteDialect({ database }), kind: "sqlite" }, rateLimit: { max: 3, windowMs: 60_000 } })
      .schema(v1)
      .auth({ secret: SECRET, emailAndPassword: { enabled: true } })
      .procedure("me", (base) => base.handler(({ context }) => context.user!.id), { permission: "authenticated" })
      .start();
    ada = await signUp(app, "ada@example.test");
  });
  afterAll(() => app?.close());

  const me = (address: string, headers: Record<string, string>) =>
    app.handle(new Request(`${ORIGIN}/rpc/me`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: "{}" }), { clientAddress: address });

  // The auth library refuses an unknown API key itself (403 "Invalid API key."); the others are anonymous.
  const guesses: Array<[string, number, (i: number) => Record<string, string>]> = [
    ["a made-up x-api-key", 403, (i) => ({ "x-api-key": `guess-${i}-${"x".repeat(40)}` })],
    ["a made-up bearer token", 401, (i) => ({ authorization: `Bearer guess-${i}` })],
    ["a junk session cookie", 401, (i) => ({ cookie: `better-auth.session_token=guess-${i}` })],
  ];

  it.each(guesses)("%s: each refusal (%i) is counted and carries RateLimit-*, then 429", async (name, refused, credential) => {
    const address = `198.51.100.${guesses.findIndex(([other]) => other === name) + 1}`;
    const statuses: number[] = [];
    const remaining: Array<string | null> = [];
    for (let i = 0; i < 5; i++) {
      const response = await me(address, credential(i));
      statuses.push(response.status);
      remaining.push(response.headers.get("RateLimit-Remaining"));
      expect(response.headers.get("RateLimit-Limit")).toBe("3");
    }
    expect(statuses).toEqual([refused, refused, refused, 429, 429]);
    expect(remaining).toEqual(["2", "1", "0", "0", "0"]);
  });

  it("a valid credential still answers, counted against the user, except from an address that spent its failures", async () => {
    const response = await me("198.51.100.10", { cookie: ada.cookie });
    expect(response.status).toBe(200);
    expect(response.headers.get("RateLimit-Remaining")).toBe("2");
    // The address that spent its budget guessing gets nothing more, whatever it presents.
    expect((await me("198.51.100.1", { cookie: ada.cookie })).status).toBe(429);
  });
});

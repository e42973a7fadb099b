import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { App } from "../../presets/trellis.js";
import { sqliteDialect } from "../../kernel/db/dialect/sqlite.js";
import { closeAfterEach, rpc } from "../support/app.js";
import { fakeLogger } from "./fake-logger.js";

const build = closeAfterEach();
afterEach(() => vi.restoreAllMocks());

function app(options: Partial<ConstructorParameters<typeof App>[0]> = {}) {
  return new App({ db: { dialect: sqliteDialect({ filename: ":memory:" }), kind: "sqlite" }, ...options })
    .procedure("signup", (base) =>
      base.input(z.object({ email: z.email(), profile: z.object({ age: z.number().int().min(13) }) })).handler(() => "ok"),
    )
    .procedure("broken", (base) => base.output(z.object({ items: z.array(z.object({ title: z.string() })) })).handler(() => ({ items: [{ title: 42 }] }) as never));
}

describe("validation messages", () => {
  it("name the field once, with no doubled prefix", async () => {
    const built = build(app({ logger: false }));
    const missing = await rpc(built, "signup", { email: "ada@example.com" });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toBe("Invalid input: profile: expected object, received undefined");
    expect(missing.body.message).not.toMatch(/Invalid input: .*Invalid input/);
  });

  it("give the nested path and say how many more issues there are", async () => {
    const built = build(app({ logger: false }));
    const result = await rpc(built, "signup", { email: "not an email", profile: { age: 3 } });
    expect(result.status).toBe(400);
    expect(result.body.message).toMatch(/^Invalid input: email: .*email.* \(and 1 more issue\)$/i);
    expect(result.body.data.issues.map((issue: { path: string[] }) => issue.path.join("."))).toEqual(["email", "profile.age"]);
  });

  it("are the request line's error for a 400", async () => {
    const logger = fakeLogger();
    const built = build(app({ logger }));
    await rpc(built, "signup", { email: "ada@example.com", profile: { age: 3 } });
    expect(logger.lines[0]!.fields).toMatchObject({ status: 400, error: "Invalid input: profile.age: Too small: expected number to be >=13" });
  });

  it("of a failing output are logged as paths and messages, not [Object]", async () => {
    const logger = fakeLogger();
    const built = build(app({ logger }));
    expect((await rpc(built, "broken")).status).toBe(500);
    const failure = logger.lines.find((line) => line.fields.err)!;
    expect(failure.fields.issues).toEqual(["items.0.title: Invalid input: expected string, received number"]);

    const printed = vi.spyOn(console, "error").mockImplementation(() => {});
    const quiet = build(app({ logger: false }));
    await rpc(quiet, "broken");
    const text = String(printed.mock.calls[0]![0]);
    expect(text).toContain("  - items.0.title: Invalid input: expected string, received number");
    expect(text).not.toContain("[Object]");
  });
});

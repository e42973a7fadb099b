// The OpenAPI document says who may call each operation, and /docs cannot be framed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { request, sqliteMemory } from "../support/app.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";
const v1 = schema("1")
  .auth({ apiKeys: true })
  .table("note", (t) => ({ id: t.serial().primaryKey(), body: t.text(), userId: t.text().nullable() }))
  .build();
const CREDENTIALS = [{ session: [] }, { apiKey: [] }];

function createApp() {
  return new App({ db: sqliteMemory() })
    .schema(v1)
    .auth({ secret: SECRET, emailAndPassword: { enabled: true } })
    .resource("note", {
      ownerColumn: "userId",
      permissions: { list: "public", get: ({ context }) => context.user !== null, create: "authenticated", update: "owner", delete: "admin" },
    })
    .procedure("open", (base) => base.handler(() => 1))
    .procedure("mine", (base) => base.handler(() => 1), { permission: "authenticated" })
    .procedure("wipe", (base) => base.input(z.object({ table: z.string() })).handler(() => 1), { permission: "admin", roles: ["ops"] })
    .procedure("gated", (base) => base.handler(() => 1), { permission: ({ context }) => context.user !== null })
    .openapi();
}

describe("OpenAPI security from the real permission", () => {
  let app: ReturnType<ReturnType<typeof createApp>["build"]>;
  let document: any;
  beforeAll(async () => {
    app = createApp().build();
    document = (await request(app, "GET", "/openapi.json")).body;
  });
  afterAll(() => app?.close());

  const security = (path: string, method: string) => document.paths[path][method].security;

  it("lists public operations as needing nothing and every other one as needing a credential", () => {
    expect(security("/open", "post")).toEqual([{}]);
    expect(security("/note", "get")).toEqual([{}]);
    for (const [path, method] of [
      ["/mine", "post"],
      ["/wipe", "post"],
      ["/gated", "post"],
      ["/note", "post"],
      ["/note/{id}", "get"],
      ["/note/{id}", "patch"],
      ["/note/{id}", "delete"],
    ] as const) {
      expect(security(path, method), `${method} ${path}`).toEqual(CREDENTIALS);
    }
  });

  it("lists the statuses each permission can answer", () => {
    expect(Object.keys(document.paths["/open"].post.responses)).toEqual(["200", "400", "500"]);
    expect(Object.keys(document.paths["/mine"].post.responses)).toEqual(["200", "400", "401", "500"]);
    expect(Object.keys(document.paths["/wipe"].post.responses)).toEqual(["200", "400", "401", "403", "500"]);
  });

  it("serves /docs with frame-ancestors 'none' and X-Frame-Options: DENY, on the page and its assets", async () => {
    for (const path of ["/docs", "/docs/init.js", "/docs/swagger-ui.css"]) {
      const { status, headers } = await request(app, "GET", path);
      expect(status).toBe(200);
      expect(headers.get("x-frame-options")).toBe("DENY");
      expect(headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    }
  });
});

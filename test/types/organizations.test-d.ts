import { describe, expectTypeOf, it } from "vitest";
import { App, type InferRouter } from "../../presets/trellis.js";
import { createClient } from "../../presets/client.js";
import { schema } from "../../kernel/schema/index.js";
import { sqliteMemory } from "../support/app.js";
import type { Membership } from "../../plugins/organizations/index.js";

const withOrganizations = schema("1")
  .auth({ organizations: true })
  .table("task", (t) => ({ id: t.serial().primaryKey(), title: t.text() }))
  .build();
const withoutOrganizations = schema("1")
  .auth()
  .table("task", (t) => ({ id: t.serial().primaryKey(), title: t.text() }))
  .build();

describe("organizations in the inferred types", () => {
  it("a schema with organizations gives context.organizations and _admin.organizations.*", async () => {
    const app = new App({ db: sqliteMemory() })
      .schema(withOrganizations)
      .auth({ secret: "x".repeat(32) })
      .admin()
      .procedure("whoami", (base) =>
        base.handler(async ({ context }) => {
          const membership = await context.organizations.membership(context);
          expectTypeOf(membership).toEqualTypeOf<Membership | null>();
          return membership?.organizationId ?? null;
        }),
      );
    const client = createClient<InferRouter<typeof app>>({ url: "http://localhost:3000" });
    const page = await client._admin.organizations.list({});
    expectTypeOf(page.data[0]!.name).toEqualTypeOf<string>();
    expectTypeOf(await client.whoami()).toEqualTypeOf<string | null>();
  });

  it("a schema without them adds neither", () => {
    const app = new App({ db: sqliteMemory() })
      .schema(withoutOrganizations)
      .auth({ secret: "x".repeat(32) })
      .admin()
      .procedure("whoami", (base) =>
        base.handler(({ context }) => {
          // @ts-expect-error: no organizations without the schema's tables
          void context.organizations;
          return null;
        }),
      );
    const client = createClient<InferRouter<typeof app>>({ url: "http://localhost:3000" });
    // @ts-expect-error: no _admin.organizations section either
    void client._admin.organizations;
  });
});

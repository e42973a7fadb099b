import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import type { AdminConfig } from "../../plugins/admin/index.js";
import type { DatabaseConfig } from "../../kernel/index.js";
import { ORIGIN } from "../support/auth.js";

export const SECRET = "a-test-secret-that-is-long-enough-0123456789";

export const v1 = schema("1")
  .auth()
  .table("post", (t) => ({
    id: t.serial().primaryKey(),
    title: t.text(),
    body: t.text().nullable(),
    views: t.integer().default(0),
    authorId: t.text().nullable().references("user", "id"),
  }))
  .build();

export const v2 = schema("2")
  .extend(v1)
  .table("post", (t) => ({ published: t.boolean().default(false) }))
  .relation("post", (rel) => ({ author: rel.belongsTo("user", { from: "authorId", to: "id" }) }))
  .build();

/** An app with auth, a `post` resource and the admin API, as the admin tests use it. */
export function adminApp(db: DatabaseConfig, admin: AdminConfig = {}, baseUrl = ORIGIN) {
  return new App({ name: "Admin Test", baseUrl, db })
    .schema(v1)
    .schema(v2)
    .auth({ secret: SECRET, emailAndPassword: { enabled: true } })
    .resource("post", { permissions: { list: "public", get: "public", create: "authenticated", update: "authenticated", delete: "admin" } })
    .admin(admin);
}

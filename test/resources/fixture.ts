import { schema, timestamps } from "../../kernel/schema/index.js";
import type { ColumnBuilder } from "../../kernel/schema/columns.js";
import { App } from "../../presets/trellis.js";
import type { TestDatabase } from "../support/databases.js";
import { ORIGIN } from "../support/auth.js";

/** A table with one nullable column of every type: what value and wire tests walk through. */
export const kitchenColumns = (t: ColumnBuilder) => ({
  id: t.serial().primaryKey(),
  label: t.text().nullable(),
  code: t.varchar().nullable(),
  qty: t.integer().nullable(),
  big: t.bigint().nullable(),
  price: t.decimal().nullable(),
  ratio: t.real().nullable(),
  flag: t.boolean().nullable(),
  at: t.timestamp().nullable(),
  day: t.date().nullable(),
  meta: t.jsonb().nullable(),
  ref: t.uuid().nullable(),
  blob: t.bytes().nullable(),
  tags: t.text().enum(["a", "b", "c"], { multiple: true }).nullable(),
});

export const v1 = schema("1")
  .auth()
  .table("post", (t) => ({
    id: t.serial().primaryKey(),
    title: t.text(),
    body: t.text().nullable(),
    status: t.text().enum(["draft", "published"]).default("draft"),
    views: t.integer().default(0),
    slug: t.varchar().nullable().unique(),
    authorId: t.text().nullable().references("user", "id", { onDelete: "cascade" }),
    secret: t.text().nullable(),
    ...timestamps(t),
  }))
  .table("comment", (t) => ({
    id: t.serial().primaryKey(),
    postId: t.integer().references("post", "id", { onDelete: "cascade" }).index(),
    body: t.text(),
  }))
  .table("note", (t) => ({
    id: t.serial().primaryKey(),
    text: t.text(),
    userId: t.text().references("user", "id", { onDelete: "cascade" }),
  }))
  .table("setting", (t) => ({ key: t.text().primaryKey(), value: t.text() }))
  .table("gadget", (t) => ({ id: t.serial().primaryKey(), name: t.text(), locked: t.boolean().default(false) }))
  .table("kitchen", kitchenColumns)
  .relation("post", (rel) => ({
    comments: rel.hasMany("comment", { from: "id", to: "postId" }),
    author: rel.belongsTo("user", { from: "authorId", to: "id" }),
  }))
  .relation("comment", (rel) => ({ post: rel.belongsTo("post", { from: "postId", to: "id" }) }))
  .build();

export function createFixtureApp(db: TestDatabase, onError: (error: unknown) => void = () => {}) {
  return new App({ name: "fixture", baseUrl: ORIGIN, db: { dialect: db.dialect, kind: db.kind }, onError })
    .schema(v1)
    .auth({ secret: "a-test-secret-that-is-long-enough-0123456789", emailAndPassword: { enabled: true } })
    .resource("post", {
      ownerColumn: "authorId",
      permissions: { list: "public", get: "public", create: "authenticated", update: "owner", delete: "owner" },
      includable: ["comments"],
      readonly: ["secret", "createdAt", "updatedAt"],
      listLimit: { default: 5, max: 10, maxSkip: 20 },
    })
    .resource("comment")
    .resource("note", {
      ownerColumn: "userId",
      permissions: { list: "owner", get: "owner", create: "authenticated", update: "owner", delete: "owner" },
    })
    .resource("setting", {
      permissions: { list: "admin", get: "admin", create: "admin", update: "admin", delete: "admin" },
    })
    .resource("gadget", {
      writable: ["name"],
      permissions: {
        list: ({ context }) => context.user?.email.endsWith("@staff.test") ?? false,
        get: ({ row }) => row?.locked !== true,
        create: ({ context }) => context.user !== null,
        update: ({ row }) => row?.locked !== true,
        delete: async ({ row }) => row?.locked !== true,
      },
    })
    .resource("kitchen");
}

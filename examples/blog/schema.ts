import { schema, timestamps } from "trellis/schema";

/** Version 1: accounts (the auth tables) and posts owned by their author. */
export const v1 = schema("1")
  .auth({ roles: ["admin", "editor"] })
  .table("post", (t) => ({
    id: t.serial().primaryKey(),
    title: t.text(),
    body: t.text().default(""),
    status: t.text().enum(["draft", "published"]).default("draft"),
    authorId: t.text().references("user", "id", { onDelete: "cascade" }).index(),
    ...timestamps(t),
  }))
  .relation("user", (rel) => ({ posts: rel.hasMany("post", { from: "id", to: "authorId" }) }))
  .build();

/** Version 2: comments, and an optional unique slug on posts. Migrated from version 1 in place. */
export const v2 = schema("2")
  .extend(v1)
  .table("post", (t) => ({ slug: t.varchar().nullable().unique() }))
  .table("comment", (t) => ({
    id: t.serial().primaryKey(),
    postId: t.integer().references("post", "id", { onDelete: "cascade" }).index(),
    authorId: t.text().references("user", "id", { onDelete: "cascade" }),
    body: t.text(),
    ...timestamps(t),
  }))
  .relation("post", (rel) => ({ comments: rel.hasMany("comment", { from: "id", to: "postId" }) }))
  .relation("comment", (rel) => ({ post: rel.belongsTo("post", { from: "postId", to: "id" }) }))
  .build();

/** Version 3: images on posts (the file table and the post_file pivot). */
export const v3 = schema("3").extend(v2).files({ attachTo: ["post"] }).build();

/** Version 4: full-text search on posts, title matches ranked above body matches, English stemming. */
export const v4 = schema("4").extend(v3).search("post", { title: "A", body: "B" }, { language: "english" }).build();

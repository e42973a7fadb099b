import { describe, expectTypeOf, it } from "vitest";
import { schema, type QueryOf } from "../../kernel/schema/index.js";

/** Every column type, each also nullable, and every relation kind. */
const v1 = schema("1")
  .table("user", (t) => ({ id: t.uuid().primaryKey(), name: t.text() }))
  .table("profile", (t) => ({ id: t.serial().primaryKey(), userId: t.uuid(), bio: t.text().nullable() }))
  .table("tag", (t) => ({ id: t.serial().primaryKey(), label: t.varchar() }))
  .table("post_tag", (t) => ({ postId: t.integer(), tagId: t.integer() }))
  .table("post", (t) => ({
    id: t.serial().primaryKey(),
    title: t.text(),
    subtitle: t.text().nullable(),
    status: t.text().enum(["draft", "published"]).default("draft"),
    slug: t.varchar(),
    ref: t.uuid().nullable(),
    views: t.integer(),
    rank: t.integer().nullable(),
    score: t.real(),
    big: t.bigint(),
    price: t.decimal().nullable(),
    published: t.boolean(),
    at: t.timestamp(),
    day: t.date().nullable(),
    meta: t.jsonb(),
    extra: t.jsonb().nullable(),
    blob: t.bytes(),
    authorId: t.uuid().nullable(),
  }))
  .relation("user", (rel) => ({
    posts: rel.hasMany("post", { from: "id", to: "authorId" }),
    profile: rel.hasOne("profile", { from: "id", to: "userId" }),
  }))
  .relation("post", (rel) => ({
    author: rel.belongsTo("user", { from: "authorId", to: "id" }),
    tags: rel.manyToMany("tag", "post_tag", { from: "id", to: "id", pivotFrom: "postId", pivotTo: "tagId" }),
  }))
  .build();

declare const query: QueryOf<typeof v1>;
const post = query.post;

type PostRow = {
  id: number;
  title: string;
  subtitle: string | null;
  status: "draft" | "published";
  slug: string;
  ref: string | null;
  views: number;
  rank: number | null;
  score: number;
  big: string;
  price: string | null;
  published: boolean;
  at: Date;
  day: Date | null;
  meta: unknown;
  extra: unknown;
  blob: Uint8Array;
  authorId: string | null;
};
type UserRow = { id: string; name: string };

describe("db.query where", () => {
  it("accepts each column type's values and operators", () => {
    void post.findMany({
      where: {
        title: "a",
        subtitle: null,
        status: "published",
        slug: { contains: "x", startsWith: "a", endsWith: "z", not: { contains: "y" } },
        ref: { isNull: true },
        views: { gt: 1, gte: 1, lt: 9, lte: 9, in: [1, 2], notIn: [3], equals: 4, not: 5 },
        rank: { equals: null, not: null, isNull: false },
        score: { lt: 1.5 },
        big: { gt: "9007199254740993", lt: 10n, in: ["1", 2] },
        price: { gte: "1.50", lte: 3 },
        published: { equals: true, not: false, in: [true] },
        at: { gt: new Date(), lt: "2024-01-01T00:00:00Z" },
        day: { gte: "2024-01-01", isNull: false },
        extra: null,
        blob: { equals: new Uint8Array([1]) },
        AND: [{ title: "a" }, { OR: [{ views: 1 }, { NOT: { views: 2 } }] }],
        NOT: [{ status: "draft" }],
      },
    });
    void post.findMany({ where: { extra: { isNull: true, equals: null, not: null } } });
    void post.count({ where: { views: { gt: 1 } } });
  });

  it("refuses a misspelled column, also inside AND/OR/NOT", () => {
    // @ts-expect-error 'titel' is not a column of post
    void post.findMany({ where: { titel: "a" } });
    // @ts-expect-error nested
    void post.findMany({ where: { OR: [{ views: 1 }, { veiws: 2 }] } });
    // @ts-expect-error count too
    void post.count({ where: { nope: 1 } });
  });

  it("refuses operators a column type does not support", () => {
    // @ts-expect-error contains is for text
    void post.findMany({ where: { views: { contains: 1 } } });
    // @ts-expect-error gt is not for text
    void post.findMany({ where: { title: { gt: "a" } } });
    // @ts-expect-error gt is not for booleans
    void post.findMany({ where: { published: { gt: true } } });
    // @ts-expect-error lt is not for bytes
    void post.findMany({ where: { blob: { lt: new Uint8Array() } } });
    // @ts-expect-error startsWith is not for timestamps
    void post.findMany({ where: { at: { startsWith: "2024" } } });
    // @ts-expect-error a non-nullable jsonb column cannot be filtered
    void post.findMany({ where: { meta: { a: 1 } } });
    // @ts-expect-error a nullable jsonb column only tests null
    void post.findMany({ where: { extra: { equals: { a: 1 } } } });
    // @ts-expect-error unknown operator
    void post.findMany({ where: { views: { between: [1, 2] } } });
  });

  it("refuses values of the wrong type", () => {
    // @ts-expect-error a Date for a text column
    void post.findMany({ where: { title: { gt: new Date() } } });
    // @ts-expect-error a string for an integer column
    void post.findMany({ where: { views: "1" } });
    // @ts-expect-error in takes an array of the column type
    void post.findMany({ where: { views: { in: ["1"] } } });
    // @ts-expect-error in takes an array
    void post.findMany({ where: { views: { in: 1 } } });
    // @ts-expect-error not a value of the enum
    void post.findMany({ where: { status: "archived" } });
    // @ts-expect-error a boolean for a bigint column
    void post.findMany({ where: { big: true } });
    // @ts-expect-error a number for a uuid column
    void post.findMany({ where: { ref: 1 } });
    // @ts-expect-error contains takes a string
    void post.findMany({ where: { slug: { contains: 1 } } });
    // @ts-expect-error a string for bytes
    void post.findMany({ where: { blob: "AQ==" } });
    // @ts-expect-error a number for a date column
    void post.findMany({ where: { day: { gt: 1 } } });
    // @ts-expect-error AND takes objects
    void post.findMany({ where: { AND: ["x"] } });
  });

  it("allows null and isNull only on nullable columns", () => {
    // @ts-expect-error title is not nullable
    void post.findMany({ where: { title: null } });
    // @ts-expect-error equals null on a non-nullable column
    void post.findMany({ where: { views: { equals: null } } });
    // @ts-expect-error isNull on a non-nullable column
    void post.findMany({ where: { views: { isNull: true } } });
    // @ts-expect-error null inside in
    void post.findMany({ where: { rank: { in: [1, null] } } });
  });
});

describe("db.query orderBy, take, skip", () => {
  it("takes columns and directions, one entry or an array", () => {
    void post.findMany({ orderBy: [{ views: "desc" }, { title: "asc" }], take: 10, skip: 5 });
    void post.findMany({ orderBy: { at: "asc" } });
    // @ts-expect-error 'titel' is not a column
    void post.findMany({ orderBy: [{ titel: "asc" }] });
    // @ts-expect-error a direction is asc or desc
    void post.findMany({ orderBy: { title: "up" } });
    // @ts-expect-error jsonb cannot be ordered by
    void post.findMany({ orderBy: { meta: "asc" } });
    // @ts-expect-error bytes cannot be ordered by
    void post.findMany({ orderBy: { blob: "asc" } });
    // @ts-expect-error take is a number
    void post.findMany({ take: "10" });
    // @ts-expect-error unknown argument
    void post.findMany({ limit: 10 });
  });
});

describe("db.query rows and include", () => {
  it("types every column as it arrives", async () => {
    expectTypeOf(await post.findMany()).toEqualTypeOf<PostRow[]>();
    expectTypeOf(await post.findFirst()).toEqualTypeOf<PostRow | null>();
    expectTypeOf(await post.count()).toEqualTypeOf<number>();
  });

  it("types included relations by kind, absent when not asked", async () => {
    const [row] = await post.findMany({ include: { author: true, tags: true } });
    expectTypeOf(row!).toEqualTypeOf<PostRow & { author: UserRow | null; tags: { id: number; label: string }[] }>();
    const user = await query.user.findFirst({ include: { posts: true, profile: true } });
    expectTypeOf(user!.posts).toEqualTypeOf<PostRow[]>();
    expectTypeOf(user!.profile).toEqualTypeOf<{ id: number; userId: string; bio: string | null } | null>();
    const one = await query.user.findFirst({ include: { posts: false, profile: true } });
    expectTypeOf(one!).not.toHaveProperty("posts");
    const plain = await query.user.findFirst();
    expectTypeOf(plain!).not.toHaveProperty("posts");
    expectTypeOf(plain!).toEqualTypeOf<UserRow>();
  });

  it("types an include's where by the target table", async () => {
    const rows = await query.user.findMany({ include: { posts: { where: { views: { gt: 10 }, status: "published" } } } });
    expectTypeOf(rows[0]!.posts).toEqualTypeOf<PostRow[]>();
    // @ts-expect-error 'name' is a column of user, not of post
    void query.user.findMany({ include: { posts: { where: { name: "x" } } } });
    // @ts-expect-error an include takes only where
    void query.user.findMany({ include: { posts: { include: { author: true } } } });
  });

  it("refuses an include of a relation that does not exist", () => {
    // @ts-expect-error 'autor' is not a relation of post
    void post.findMany({ include: { autor: true } });
    // @ts-expect-error tag declares no relations
    void query.tag.findMany({ include: { posts: true } });
  });

  it("types live snapshots and compile like findMany", () => {
    expectTypeOf(post.live({ include: { author: true } })).toEqualTypeOf<AsyncIterableIterator<(PostRow & { author: UserRow | null })[]>>();
    expectTypeOf(post.compile({ where: { views: 1 } })).toEqualTypeOf<{ readonly sql: string; readonly parameters: readonly unknown[] }>();
    // @ts-expect-error live checks where too
    void post.live({ where: { titel: "a" } });
  });
});

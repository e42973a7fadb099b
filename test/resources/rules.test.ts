import { describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { errorOf, sqliteMemory } from "../support/app.js";

const v1 = schema("1")
  .table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text(), ownerId: t.text().nullable() }))
  .table("log", (t) => ({ line: t.text() }))
  .build();
const app = () => new App({ db: sqliteMemory() }).schema(v1);

describe("resource build-time rules", () => {
  it("throws at build for a resource without a table in the latest schema", () => {
    expect(errorOf(() => app().resource("ghost" as never).build())).toMatchObject({
      code: "RESOURCE_TABLE_MISSING",
      plugin: "resources",
      message: expect.stringMatching(/Resource "ghost" has no table "ghost"/),
    });
    expect(errorOf(() => new App({ db: sqliteMemory() }).resource("post" as never).build())).toMatchObject({ code: "RESOURCE_TABLE_MISSING" });
  });

  it("throws at build for a table without a primary key", () => {
    expect(errorOf(() => app().resource("log").build())).toMatchObject({ code: "RESOURCE_NO_PRIMARY_KEY", message: expect.stringMatching(/"log" needs a \.primaryKey\(\)/) });
  });

  it("throws at the call for owner without ownerColumn, owner on create, and writable with readonly", () => {
    expect(() => app().resource("post", { permissions: { update: "owner" } })).toThrow(/RESOURCE_OWNER_COLUMN_MISSING|needs ownerColumn/);
    expect(() => app().resource("post", { ownerColumn: "ownerId", permissions: { create: "owner" } as never })).toThrow(/not valid for create/);
    expect(() => app().resource("post", { writable: ["title"], readonly: ["ownerId"] })).toThrow(/mutually exclusive/);
  });

  it("throws at build for unknown column and relation names, against the latest schema", () => {
    // @ts-expect-error "nope" is not a column: refused by the types too
    expect(errorOf(() => app().resource("post", { writable: ["title", "nope"] }).build())).toMatchObject({
      code: "RESOURCE_UNKNOWN_COLUMN",
      message: expect.stringMatching(/unknown columns: nope/),
    });
    // @ts-expect-error "zzz" is not a column
    expect(() => app().resource("post", { readonly: ["zzz"] }).build()).toThrow(/unknown columns: zzz/);
    // @ts-expect-error "author" is not a relation
    expect(() => app().resource("post", { includable: ["author"] }).build()).toThrow(/unknown relations: author/);
    const v2 = schema("2").extend(v1).table("post", (t) => ({ slug: t.text().nullable() })).build();
    // @ts-expect-error the types see the schema of the call; "slug" arrives with v2
    const later = app().resource("post", { writable: ["title", "slug"] }).schema(v2);
    expect(() => later.build()).not.toThrow();
  });

  it("lists several problems in one error, keeping each one's code", () => {
    const many = app().resource("log").resource("ghost" as never);
    const error = errorOf(() => many.build());
    expect(error).toMatchObject({ code: "RESOURCE_INVALID", message: expect.stringMatching(/"log" needs a \.primaryKey\(\)[\s\S]*"ghost" has no table/) });
    expect(error.cause.map((problem: { code: string }) => problem.code)).toEqual(["RESOURCE_NO_PRIMARY_KEY", "RESOURCE_TABLE_MISSING"]);
    const acrossPlugins = errorOf(() => app().resource("log").use({ name: "picky", validate: () => { throw new Error("no"); } }).build());
    expect(acrossPlugins).toMatchObject({ code: "KERNEL_VALIDATION_FAILED", message: expect.stringMatching(/resources: .*primaryKey[\s\S]*picky: no/) });
  });

  it("throws on a duplicate resource", () => {
    expect(() => app().resource("post").resource("post")).toThrow(/already declared/);
  });
});

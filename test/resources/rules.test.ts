import { describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { sqliteMemory } from "../support/app.js";

const v1 = schema("1")
  .table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text(), ownerId: t.text().nullable() }))
  .table("log", (t) => ({ line: t.text() }))
  .build();
const app = () => new App({ db: sqliteMemory() }).schema(v1);

describe("resource build-time rules", () => {
  it("throws at build for a resource without a table in the latest schema", () => {
    expect(() => app().resource("ghost" as never).build()).toThrow(/RESOURCE_TABLE_MISSING: resource "ghost" has no table "ghost"/);
    expect(() => new App({ db: sqliteMemory() }).resource("post" as never).build()).toThrow(/RESOURCE_TABLE_MISSING/);
  });

  it("throws at build for a table without a primary key", () => {
    expect(() => app().resource("log").build()).toThrow(/RESOURCE_NO_PRIMARY_KEY/);
  });

  it("throws at the call for owner without ownerColumn, owner on create, and writable with readonly", () => {
    expect(() => app().resource("post", { permissions: { update: "owner" } })).toThrow(/RESOURCE_OWNER_COLUMN_MISSING|needs ownerColumn/);
    expect(() => app().resource("post", { ownerColumn: "ownerId", permissions: { create: "owner" } as never })).toThrow(/not valid for create/);
    expect(() => app().resource("post", { writable: ["title"], readonly: ["ownerId"] })).toThrow(/mutually exclusive/);
  });

  it("throws at build for unknown column and relation names", () => {
    expect(() => app().resource("post", { writable: ["title", "nope"] }).build()).toThrow(/unknown columns: nope/);
    expect(() => app().resource("post", { readonly: ["zzz"] }).build()).toThrow(/unknown columns: zzz/);
    expect(() => app().resource("post", { includable: ["author"] }).build()).toThrow(/unknown relations: author/);
  });

  it("throws on a duplicate resource", () => {
    expect(() => app().resource("post").resource("post")).toThrow(/already declared/);
  });
});

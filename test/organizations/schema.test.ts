import { describe, expect, expectTypeOf, it } from "vitest";
import { schema, type InferDB } from "../../kernel/schema/index.js";

describe("schema .auth({ organizations })", () => {
  it("declares the organization plugin's tables and session column", () => {
    const v1 = schema("1").auth({ organizations: true }).build();
    expect(Object.keys(v1.tables)).toEqual(expect.arrayContaining(["organization", "member", "invitation"]));
    expect(v1.tables.team).toBeUndefined();
    expect(v1.tables.session.columns.activeOrganizationId.nullable).toBe(true);
    expect(v1.tables.session.columns.activeTeamId).toBeUndefined();
    expect(v1.tables.member.columns.organizationId.references).toMatchObject({ table: "organization", column: "id", onDelete: "cascade" });
    expect(v1.auth).toEqual({ apiKeys: false, organizations: { teams: false } });
    expectTypeOf<InferDB<typeof v1>["member"]["role"]>().toEqualTypeOf<string>();
    expectTypeOf<InferDB<typeof v1>["session"]["activeOrganizationId"]>().toEqualTypeOf<string | null>();
    expectTypeOf<InferDB<typeof v1>["session"]["userId"]>().toEqualTypeOf<string>();
  });

  it("adds teams on request, and keeps the flag through .extend()", () => {
    const v1 = schema("1").auth({ organizations: { teams: true } }).build();
    expect(v1.tables.team.columns.organizationId.references?.table).toBe("organization");
    expect(Object.keys(v1.tables.session.columns)).toEqual(expect.arrayContaining(["activeOrganizationId", "activeTeamId", "impersonatedBy"]));
    const v2 = schema("2").extend(v1).table("task", (t) => ({ id: t.serial().primaryKey(), orgId: t.text().references("organization", "id") })).build();
    expect(v2.auth?.organizations).toEqual({ teams: true });
    expectTypeOf<InferDB<typeof v2>["teamMember"]["teamId"]>().toEqualTypeOf<string>();
  });

  it("refuses to change a column the organization plugin relies on", () => {
    expect(() => schema("1").auth({ organizations: true }).table("member", (t) => ({ role: t.integer() }))).toThrow(/member.role is a text column required by .auth\(\)/);
  });

  it("without the flag, declares none of it", () => {
    const v1 = schema("1").auth().build();
    expect(v1.tables.organization).toBeUndefined();
    expect(v1.tables.session.columns.activeOrganizationId).toBeUndefined();
    expect(v1.auth).toEqual({ apiKeys: false });
  });
});

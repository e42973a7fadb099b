/**
 * The tables better-auth 1.7's organization plugin reads and writes (`.auth({ organizations: true })`):
 * `organization`, `member`, `invitation`, the session's `activeOrganizationId`, and with teams `team`,
 * `teamMember` and the session's `activeTeamId`. Column names are the plugin's default field names.
 * Membership rows cascade with their organization and their user, so deleting either leaves no
 * member that a tenant check could still find.
 */
import { columnModels, t, type ColumnBuilder, type ColumnModels, type ColumnsOf, type ColumnStateOf as Of } from "./columns.js";
import { rel, type RelationDef } from "./relations.js";
import type { RelationState } from "./types.js";
import type { SchemaModel } from "./model.js";

/** `.auth({ organizations })`: `true`, or what to add beside organizations, members and invitations. */
export type OrganizationsFlag = boolean | { teams?: boolean };

/** What a schema's `auth.organizations` records (undefined without organizations). */
export type OrganizationsModel = NonNullable<NonNullable<SchemaModel["auth"]>["organizations"]>;

type Id = Of<"text", string, false, false, true>;
type Text = Of<"text", string>;
type TextOrNull = Of<"text", string, true>;
type Stamp = Of<"timestamp", Date, false, true>;
type WhenOrNull = Of<"timestamp", Date, true>;

export type OrganizationColumns = { id: Id; name: Text; slug: Text; logo: TextOrNull; createdAt: Stamp; metadata: TextOrNull };
export type MemberColumns = { id: Id; organizationId: Text; userId: Text; role: Of<"text", string, false, true>; createdAt: Stamp };
export type InvitationColumns = {
  id: Id;
  organizationId: Text;
  email: Text;
  role: TextOrNull;
  teamId: TextOrNull;
  status: Of<"text", string, false, true>;
  expiresAt: Of<"timestamp", Date>;
  createdAt: Stamp;
  inviterId: Text;
};
export type TeamColumns = { id: Id; name: Text; memberCount: Of<"integer", number, false, true>; organizationId: Text; createdAt: Stamp; updatedAt: WhenOrNull };
export type TeamMemberColumns = { id: Id; teamId: Text; userId: Text; membershipKey: TextOrNull; createdAt: Of<"timestamp", Date, true, true> };

export type OrganizationTables = {
  organization: OrganizationColumns;
  member: MemberColumns;
  invitation: InvitationColumns;
  session: { activeOrganizationId: TextOrNull };
};
export type TeamTables = { team: TeamColumns; teamMember: TeamMemberColumns; session: { activeTeamId: TextOrNull } };

/** The tables a flag adds, for the schema builder's type. */
export type OrganizationTablesOf<O> = [O] extends [false] ? {} : [O] extends [{ teams: true }] ? OrganizationTables & TeamTables : [O] extends [true | { teams?: boolean }] ? OrganizationTables : {};

export type OrganizationRelations = {
  organization: { members: RelationState<"hasMany", "member">; invitations: RelationState<"hasMany", "invitation"> };
  member: { organization: RelationState<"belongsTo", "organization">; user: RelationState<"belongsTo", "user"> };
  invitation: { organization: RelationState<"belongsTo", "organization"> };
};

const id = (b: ColumnBuilder) => b.text().primaryKey();
const now = (b: ColumnBuilder) => b.timestamp().defaultSql("CURRENT_TIMESTAMP");
const cascade = (b: ColumnBuilder, table: string) => b.text().references(table, "id", { onDelete: "cascade" }).index();

const organization = (b: ColumnBuilder): ColumnsOf<OrganizationColumns> => ({
  id: id(b),
  name: b.text(),
  slug: b.text().unique(),
  logo: b.text().nullable(),
  createdAt: now(b),
  metadata: b.text().nullable(),
});

const member = (b: ColumnBuilder): ColumnsOf<MemberColumns> => ({
  id: id(b),
  organizationId: cascade(b, "organization"),
  userId: cascade(b, "user"),
  // Several roles per member, comma-separated, as the plugin stores them.
  role: b.text().default("member"),
  createdAt: now(b),
});

const invitation = (b: ColumnBuilder): ColumnsOf<InvitationColumns> => ({
  id: id(b),
  organizationId: cascade(b, "organization"),
  email: b.text().index(),
  role: b.text().nullable(),
  teamId: b.text().nullable(),
  status: b.text().default("pending"),
  expiresAt: b.timestamp(),
  createdAt: now(b),
  inviterId: cascade(b, "user"),
});

const team = (b: ColumnBuilder): ColumnsOf<TeamColumns> => ({
  id: id(b),
  name: b.text(),
  memberCount: b.integer().default(0),
  organizationId: cascade(b, "organization"),
  createdAt: now(b),
  updatedAt: b.timestamp().nullable(),
});

const teamMember = (b: ColumnBuilder): ColumnsOf<TeamMemberColumns> => ({
  id: id(b),
  teamId: cascade(b, "team"),
  userId: cascade(b, "user"),
  membershipKey: b.text().nullable().unique(),
  createdAt: b.timestamp().nullable().defaultSql("CURRENT_TIMESTAMP"),
});

/** The flag as the schema model records it, or undefined for none. */
export function organizationsModel(flag: OrganizationsFlag | undefined, previous?: OrganizationsModel): OrganizationsModel | undefined {
  if (flag === undefined || flag === false) return previous;
  if (flag !== true && (typeof flag !== "object" || flag === null)) throw new TypeError(".auth() organizations must be true, false or { teams?: boolean }");
  return { teams: (flag !== true && flag.teams === true) || previous?.teams === true };
}

/** The organization tables' column models, and the session columns the plugin adds. */
export function organizationTables(model: OrganizationsModel): Record<string, ColumnModels> {
  const tables: Record<string, ColumnModels> = {
    organization: columnModels(organization(t)),
    member: columnModels(member(t)),
    invitation: columnModels(invitation(t)),
    session: columnModels({ activeOrganizationId: t.text().nullable() }),
  };
  if (model.teams) {
    tables.team = columnModels(team(t));
    tables.teamMember = columnModels(teamMember(t));
    tables.session = columnModels({ activeOrganizationId: t.text().nullable(), activeTeamId: t.text().nullable() });
  }
  return tables;
}

export function organizationRelations(model: OrganizationsModel): Record<string, Record<string, RelationDef>> {
  const relations: Record<string, Record<string, RelationDef>> = {
    organization: {
      members: rel.hasMany("member", { from: "id", to: "organizationId" }),
      invitations: rel.hasMany("invitation", { from: "id", to: "organizationId" }),
    },
    member: {
      organization: rel.belongsTo("organization", { from: "organizationId", to: "id" }),
      user: rel.belongsTo("user", { from: "userId", to: "id" }),
    },
    invitation: { organization: rel.belongsTo("organization", { from: "organizationId", to: "id" }) },
  };
  if (model.teams) {
    relations.organization.teams = rel.hasMany("team", { from: "id", to: "organizationId" });
    relations.team = { organization: rel.belongsTo("organization", { from: "organizationId", to: "id" }) };
  }
  return relations;
}

import { z } from "zod";
import { isAPIError } from "better-auth/api";
import type { OrganizationOptions } from "better-auth/plugins/organization";
import { RpcError, decodeRow, type AppDatabase, type AppRpcContext, type DatabaseKind, type ProcedureBase, type SchemaModel } from "../../kernel/index.js";

type Row = Record<string, unknown>;

/** The app's `organizationHooks` (better-auth's organization plugin options). */
export type OrganizationHooks = NonNullable<OrganizationOptions["organizationHooks"]>;

export interface OrganizationsAdminDeps {
  db: AppDatabase<any>;
  kind: DatabaseKind;
  schema: SchemaModel;
  /** The roles a member may hold: the app's `roles` (or owner, admin and member) and its `creatorRole`. */
  roles: readonly string[];
  /** The role that owns an organization (`creatorRole`, "owner" by default): the last one is never removed. */
  ownerRole: string;
  /**
   * The `organizationHooks` of the organization plugin the auth library runs (`.auth({ organization })`
   * or an `organization()` of the app's own in `plugins`), read when a write happens.
   */
  hooks: () => OrganizationHooks | undefined;
}

/** An organization as `_admin.organizations.list` shows it. */
export interface AdminOrganization {
  id: string;
  name: string;
  slug: string;
  createdAt: Date;
  members: number;
  /** Invitations still pending (an expired one counts until it is answered or cancelled). */
  invitations: number;
}

export interface AdminOrganizationMember {
  id: string;
  userId: string;
  email: string;
  name: string;
  roles: string[];
  createdAt: Date;
}

export interface AdminOrganizationInvitation {
  id: string;
  email: string;
  role: string | null;
  status: string;
  expiresAt: Date;
  createdAt: Date;
  inviterEmail: string | null;
}

/** One organization with its members (and their roles) and its pending invitations. */
export interface AdminOrganizationDetail extends AdminOrganization {
  logo: string | null;
  metadata: string | null;
  memberList: AdminOrganizationMember[];
  pendingInvitations: AdminOrganizationInvitation[];
}

/** A user's place in one organization, for the user panel. */
export interface AdminMembership {
  memberId: string;
  organizationId: string;
  organization: string;
  slug: string;
  roles: string[];
  createdAt: Date;
}

const id = z.string().min(1).max(200);
const roleList = z.array(z.string().trim().min(1).max(100).regex(/^[^,]+$/, "one role per entry, without commas")).min(1).max(20);

function rolesOf(role: unknown): string[] {
  return typeof role === "string" ? role.split(",").map((r) => r.trim()).filter(Boolean) : [];
}

/**
 * `_admin.organizations.*` (the service `admin-section:organizations`, mounted by the admin plugin
 * behind its role check): every organization with its member and invitation counts, one with its
 * members, roles and pending invitations, a user's memberships, and the writes an operator needs:
 * a member's roles, a member removed, an invitation cancelled, an organization deleted (its members,
 * invitations and teams go with it through their cascades).
 *
 * The writes go to the library's tables through the app's database, so the audit log records them
 * (with `.audit()`, actor the admin, source `admin`), and the organizations service forgets its kept
 * memberships at once: a removed member's next tenant request answers `NO_ACTIVE_ORGANIZATION`. They
 * keep the library's one invariant an admin could break, an organization's last owner, and run the
 * app's `organizationHooks` around them with the arguments the library's own endpoints pass: a
 * `before*` hook that throws refuses the write (an `APIError` answers its status and message), an
 * `after*` hook runs once the write is done.
 */
export function organizationsAdminSection(deps: OrganizationsAdminDeps) {
  return (gated: ProcedureBase<AppRpcContext>) => organizationProcedures(gated, deps);
}

function organizationProcedures(gated: ProcedureBase<AppRpcContext>, deps: OrganizationsAdminDeps) {
  const { db } = deps;
  const decode = (table: string, row: Row) => decodeRow(deps.kind, deps.schema.tables[table]!, row) as Row;
  const counted = () =>
    db.selectFrom("organization").select([
      "organization.id",
      "organization.name",
      "organization.slug",
      "organization.logo",
      "organization.metadata",
      "organization.createdAt",
      (eb: any) => eb.selectFrom("member").select(eb.fn.countAll().as("n")).whereRef("member.organizationId", "=", "organization.id").as("members"),
      (eb: any) =>
        eb.selectFrom("invitation").select(eb.fn.countAll().as("n")).whereRef("invitation.organizationId", "=", "organization.id").where("invitation.status", "=", "pending").as("invitations"),
    ] as never);
  const summary = (row: Row): AdminOrganization => {
    const r = decode("organization", row);
    return { id: r.id as string, name: r.name as string, slug: r.slug as string, createdAt: r.createdAt as Date, members: Number(row.members), invitations: Number(row.invitations) };
  };
  /** One row as the library's adapter reads it, every column decoded; undefined when there is none. */
  const fullRow = async (table: string, rowId: string): Promise<Row | undefined> => {
    const row = (await db.selectFrom(table as never).selectAll().where("id" as never, "=", rowId as never).executeTakeFirst()) as Row | undefined;
    return row && decode(table, row);
  };
  /** A member and its roles, with the whole row (what the member hooks receive). */
  const memberRow = async (memberId: string) => {
    const row = await fullRow("member", memberId);
    if (!row) throw new RpcError("NOT_FOUND", { message: `No member with id "${memberId}"` });
    return { id: row.id as string, organizationId: row.organizationId as string, roles: rolesOf(row.role), row };
  };
  /** A user row for a hook: the member's, or the acting admin's (the session user when the row is gone). */
  const userOf = async (userId: string, fallback?: Row | null): Promise<Row> => (await fullRow("user", userId)) ?? fallback ?? { id: userId };
  const organizationOf = async (organizationId: string): Promise<Row> => (await fullRow("organization", organizationId)) ?? { id: organizationId };
  /**
   * Runs one of the app's hooks. A refusal in the library's own terms (an `APIError` below 500)
   * answers its status and message; anything else propagates as thrown.
   */
  const run = async <R>(call: () => Promise<R>): Promise<R> => {
    try {
      return await call();
    } catch (error) {
      if (isAPIError(error) && error.statusCode < 500) throw new RpcError(String(error.status), { status: error.statusCode, message: error.message });
      throw error;
    }
  };
  /** What the library's member hooks receive: the member row, its user and its organization. */
  const memberSubjects = async (member: Row) => {
    const [user, organization] = await Promise.all([userOf(member.userId as string), organizationOf(member.organizationId as string)]);
    return { member, user, organization };
  };
  /** 409 when `member` is the organization's only holder of the owner role and would lose it. */
  const keepAnOwner = async (member: { id: string; organizationId: string; roles: string[] }, what: string) => {
    if (!member.roles.includes(deps.ownerRole)) return;
    const others = (await db.selectFrom("member").select(["role"]).where("organizationId", "=", member.organizationId).where("id", "!=", member.id).execute()) as Row[];
    if (others.some((other) => rolesOf(other.role).includes(deps.ownerRole))) return;
    throw new RpcError("CONFLICT", { message: `Cannot ${what}: they are the organization's only ${deps.ownerRole}. Give another member the ${deps.ownerRole} role first, or delete the organization` });
  };

  return {
    list: gated
      .input(z.object({ take: z.number().int().min(1).max(200).optional(), skip: z.number().int().min(0).max(100_000).optional() }).default({}))
      .handler(async ({ input }): Promise<{ data: AdminOrganization[]; count: number }> => {
        const rows = (await counted().orderBy("organization.createdAt" as never, "desc").orderBy("organization.id" as never).limit(input.take ?? 25).offset(input.skip ?? 0).execute()) as Row[];
        const { count } = (await db.selectFrom("organization").select((eb) => eb.fn.countAll().as("count")).executeTakeFirstOrThrow()) as { count: number | string };
        return { data: rows.map(summary), count: Number(count) };
      }),

    get: gated.input(z.object({ id })).handler(async ({ input }): Promise<AdminOrganizationDetail> => {
      const row = (await counted().where("organization.id" as never, "=", input.id as never).executeTakeFirst()) as Row | undefined;
      if (!row) throw new RpcError("NOT_FOUND", { message: `No organization with id "${input.id}"` });
      const members = (await db
        .selectFrom("member")
        .innerJoin("user", "user.id", "member.userId")
        .select(["member.id", "member.userId", "member.role", "member.createdAt", "user.email", "user.name"])
        .where("member.organizationId", "=", input.id)
        .orderBy("member.createdAt")
        .orderBy("member.id")
        .execute()) as Row[];
      const invitations = (await db
        .selectFrom("invitation")
        .leftJoin("user", "user.id", "invitation.inviterId")
        .select(["invitation.id", "invitation.email", "invitation.role", "invitation.status", "invitation.expiresAt", "invitation.createdAt", "user.email as inviterEmail"])
        .where("invitation.organizationId", "=", input.id)
        .where("invitation.status", "=", "pending")
        .orderBy("invitation.createdAt", "desc")
        .execute()) as Row[];
      const org = decode("organization", row);
      return {
        ...summary(row),
        logo: (org.logo as string | null) ?? null,
        metadata: (org.metadata as string | null) ?? null,
        memberList: members.map((m) => {
          const r = decode("member", m);
          return { id: r.id as string, userId: r.userId as string, email: m.email as string, name: m.name as string, roles: rolesOf(r.role), createdAt: r.createdAt as Date };
        }),
        pendingInvitations: invitations.map((i) => {
          const r = decode("invitation", i);
          return { id: r.id as string, email: r.email as string, role: (r.role as string | null) ?? null, status: r.status as string, expiresAt: r.expiresAt as Date, createdAt: r.createdAt as Date, inviterEmail: (i.inviterEmail as string | null) ?? null };
        }),
      };
    }),

    memberships: gated.input(z.object({ userId: id })).handler(async ({ input }): Promise<AdminMembership[]> => {
      const rows = (await db
        .selectFrom("member")
        .innerJoin("organization", "organization.id", "member.organizationId")
        .select(["member.id", "member.organizationId", "member.role", "member.createdAt", "organization.name", "organization.slug"])
        .where("member.userId", "=", input.userId)
        .orderBy("organization.name")
        .execute()) as Row[];
      return rows.map((m) => {
        const r = decode("member", m);
        return { memberId: r.id as string, organizationId: r.organizationId as string, organization: m.name as string, slug: m.slug as string, roles: rolesOf(r.role), createdAt: r.createdAt as Date };
      });
    }),

    setRoles: gated.input(z.object({ memberId: id, roles: roleList })).handler(async ({ input }): Promise<{ id: string; roles: string[] }> => {
      const unknown = input.roles.filter((role) => !deps.roles.includes(role));
      if (unknown.length) throw new RpcError("BAD_REQUEST", { message: `Unknown role ${unknown.map((r) => `"${r}"`).join(", ")} (roles: ${deps.roles.join(", ")})` });
      const member = await memberRow(input.memberId);
      let roles = [...new Set(input.roles)];
      if (!roles.includes(deps.ownerRole)) await keepAnOwner(member, "take the role away from this member");
      const hooks = deps.hooks();
      const subjects = hooks?.beforeUpdateMemberRole || hooks?.afterUpdateMemberRole ? await memberSubjects(member.row) : undefined;
      if (hooks?.beforeUpdateMemberRole && subjects) {
        const newRole = roles.join(",");
        const answer = await run(() => hooks.beforeUpdateMemberRole!({ member: subjects.member as never, newRole, user: subjects.user as never, organization: subjects.organization as never }));
        // As the library does: a hook may return the role to write instead.
        if (answer && typeof answer === "object" && "data" in answer && answer.data?.role && answer.data.role !== newRole) {
          roles = [...new Set(rolesOf(answer.data.role))];
          if (!roles.includes(deps.ownerRole)) await keepAnOwner(member, "take the role away from this member");
        }
      }
      await db.updateTable("member").set({ role: roles.join(",") }).where("id", "=", member.id).execute();
      if (hooks?.afterUpdateMemberRole && subjects) {
        const updated = (await fullRow("member", member.id)) ?? { ...subjects.member, role: roles.join(",") };
        await run(() => hooks.afterUpdateMemberRole!({ member: updated as never, previousRole: subjects.member.role as string, user: subjects.user as never, organization: subjects.organization as never }));
      }
      return { id: member.id, roles };
    }),

    removeMember: gated.input(z.object({ memberId: id })).handler(async ({ input }): Promise<{ removed: true }> => {
      const member = await memberRow(input.memberId);
      await keepAnOwner(member, "remove this member");
      const hooks = deps.hooks();
      const subjects = hooks?.beforeRemoveMember || hooks?.afterRemoveMember ? await memberSubjects(member.row) : undefined;
      const args = subjects && { member: subjects.member as never, user: subjects.user as never, organization: subjects.organization as never };
      if (hooks?.beforeRemoveMember && args) await run(() => hooks.beforeRemoveMember!(args));
      await db.deleteFrom("member").where("id", "=", member.id).execute();
      if (hooks?.afterRemoveMember && args) await run(() => hooks.afterRemoveMember!(args));
      return { removed: true };
    }),

    cancelInvitation: gated.input(z.object({ id })).handler(async ({ input, context }): Promise<{ id: string; status: "canceled" }> => {
      const row = await fullRow("invitation", input.id);
      if (!row) throw new RpcError("NOT_FOUND", { message: `No invitation with id "${input.id}"` });
      if (row.status !== "pending") throw new RpcError("CONFLICT", { message: `Invitation ${input.id} is ${String(row.status)}; only a pending invitation can be cancelled` });
      const hooks = deps.hooks();
      const hooked = hooks?.beforeCancelInvitation || hooks?.afterCancelInvitation;
      // The library passes the member who cancels; here it is the admin.
      const cancelledBy = hooked ? await userOf(context.user!.id, context.user) : undefined;
      const organization = hooked ? await organizationOf(row.organizationId as string) : undefined;
      if (hooks?.beforeCancelInvitation) await run(() => hooks.beforeCancelInvitation!({ invitation: row as never, cancelledBy: cancelledBy as never, organization: organization as never }));
      // The library's own word for it, so its endpoints read the row as cancelled too.
      await db.updateTable("invitation").set({ status: "canceled" }).where("id", "=", input.id).where("status", "=", "pending").execute();
      if (hooks?.afterCancelInvitation) {
        const invitation = (await fullRow("invitation", input.id)) ?? { ...row, status: "canceled" };
        await run(() => hooks.afterCancelInvitation!({ invitation: invitation as never, cancelledBy: cancelledBy as never, organization: organization as never }));
      }
      return { id: input.id, status: "canceled" };
    }),

    delete: gated.input(z.object({ id })).handler(async ({ input, context }): Promise<{ deleted: true }> => {
      const organization = await fullRow("organization", input.id);
      if (!organization) throw new RpcError("NOT_FOUND", { message: `No organization with id "${input.id}"` });
      const hooks = deps.hooks();
      // The library passes the member who deletes; here it is the admin (and no endpoint context).
      const user = hooks?.beforeDeleteOrganization || hooks?.afterDeleteOrganization ? await userOf(context.user!.id, context.user) : undefined;
      if (hooks?.beforeDeleteOrganization) await run(() => hooks.beforeDeleteOrganization!({ organization: organization as never, user: user as never }));
      // Members, invitations and teams cascade; a tenant table whose reference does not cascade refuses with 409.
      await db.deleteFrom("organization").where("id", "=", input.id).execute();
      // Sessions still pointing at it now have no active organization (the library clears only its caller's).
      await db.updateTable("session").set({ activeOrganizationId: null }).where("activeOrganizationId", "=", input.id).execute();
      if (hooks?.afterDeleteOrganization) await run(() => hooks.afterDeleteOrganization!({ organization: organization as never, user: user as never }));
      return { deleted: true };
    }),
  };
}

/** What `_admin.organizations` holds, for a typed client: `createClient<{ _admin: { organizations: AdminOrganizationsRouter } }>`. */
export type AdminOrganizationsRouter = ReturnType<typeof organizationProcedures>;

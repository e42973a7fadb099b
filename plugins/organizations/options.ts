import type { OrganizationOptions } from "better-auth/plugins/organization";

/**
 * better-auth's organization plugin options, passed through as given (`.auth({ organization })`):
 * `allowUserToCreateOrganization`, `organizationLimit`, `membershipLimit`, `creatorRole`,
 * `invitationExpiresIn`, `ac` and `roles` (access-control statements), `organizationHooks`, ...
 * `teams.enabled` follows the schema (`.auth({ organizations: { teams: true } })`); invitation mail
 * goes through `.mail()` unless `sendInvitationEmail` is given.
 */
export type OrganizationsConfig = OrganizationOptions;

/** What Trellis adds to the library's options. */
export interface OrganizationsExtras {
  /**
   * The link an invitation mail carries, `{id}` replaced by the invitation's id: the app's page that
   * shows it (`GET /api/auth/organization/get-invitation?id=`) and accepts or declines it.
   * @default "<baseUrl>/accept-invitation/{id}"
   */
  invitationUrl?: string;
}

/** The caller's place in their active organization. */
export interface Membership {
  /** The session's `activeOrganizationId`, confirmed by a `member` row. */
  organizationId: string;
  /** The member's user. */
  userId: string;
  /** The member row's id. */
  memberId: string;
  /** The member's roles (`member.role` is comma-separated: `"admin,billing"`). */
  roles: readonly string[];
}

/** `{ task: ["delete"] }`: actions per statement of the app's access control (better-auth's `ac`). */
export type PermissionStatements = Record<string, readonly string[]>;

/** The organizations service: `context.organizations`, and what tenant-scoped resources ask. */
export interface Tenancy {
  /**
   * The caller's active organization and roles in it, or null when signed out, with no active
   * organization, or no longer a member of it. One query per request, memoised.
   */
  membership(context: { session: { [key: string]: unknown } | null; user: { id: string } | null }): Promise<Membership | null>;
  /** Like `membership`, but 401 signed out and 403 `NO_ACTIVE_ORGANIZATION` (naming `organization/set-active`) without one. */
  require(context: { session: { [key: string]: unknown } | null; user: { id: string } | null }): Promise<Membership>;
  /**
   * Makes a context built without a request (a job's, a script's) act for `userId` in
   * `organizationId`: `membership` and `require` then answer from that member's row as it is when
   * asked (null, or 403, once the member or the organization is gone), and tenant-scoped resources
   * called with the context are scoped to the organization. `context.user` is left as it is. The
   * jobs plugin does this for a job sent during a request with an active organization.
   */
  actAs(context: { session: { [key: string]: unknown } | null; user: { id: string } | null }, acting: { organizationId: string; userId: string }): void;
  /** Whether one of the member's roles grants every action named (the app's access-control statements). */
  can(membership: Membership, permissions: PermissionStatements): boolean;
}

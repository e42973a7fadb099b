import { organization } from "better-auth/plugins/organization";
import type { BetterAuthOptions } from "better-auth";
import { TrellisError, definePlugin, type AppPlugin, type SealedApp } from "../../kernel/index.js";
import { invitationMail } from "./invitation-mail.js";
import { permissionCheck } from "./access.js";
import { membershipLookup } from "./membership.js";
import { ORGANIZATIONS_SCHEMA_MISSING } from "./errors.js";
import { organizationsAdminSection, type OrganizationHooks } from "./admin.js";
import { defaultRoles } from "better-auth/plugins/organization/access";
import type { OrganizationsConfig, OrganizationsExtras, Tenancy } from "./options.js";

export type { OrganizationsConfig, OrganizationsExtras, Membership, Tenancy, PermissionStatements } from "./options.js";
export { NO_ACTIVE_ORGANIZATION, ORGANIZATIONS_SCHEMA_MISSING } from "./errors.js";
export type { AdminOrganizationsRouter, AdminOrganization, AdminOrganizationDetail, AdminOrganizationMember, AdminOrganizationInvitation, AdminMembership } from "./admin.js";
export { isOrgRule, orgRulePermission, withOrgRule, type OrgRule } from "./rules.js";

declare module "../../kernel/index.js" {
  interface AppServices {
    /** The caller's active organization and roles (`membership`, `require`, `can`); also `context.organizations`. */
    organizations: Tenancy;
  }
}

type Extend = { extend(step: (options: BetterAuthOptions) => BetterAuthOptions): void };

/**
 * Organizations: better-auth's `organization()` plugin on the app's database (its endpoints under
 * `/api/auth/organization/*`), enabled when the schema declares its tables
 * (`.auth({ organizations: true })`), and the `organizations` service tenant-scoped resources and
 * membership rules read. Stage `identity`, after auth: it adds the library plugin through the
 * `auth-options` service before the library exists, and resources (stage `feature`) read its service.
 *
 * @param config the library plugin's options (`.auth({ organization })`); `undefined` when not given.
 */
export function organizationsPlugin(config?: OrganizationsConfig & OrganizationsExtras, app: { baseUrl?: string } = {}): AppPlugin {
  return definePlugin({
    name: "organizations",
    stage: "identity",
    dependencies: ["auth"],
    validate(ctx) {
      if (config && !ctx.schema.auth?.organizations) {
        throw new TrellisError(
          ORGANIZATIONS_SCHEMA_MISSING,
          '.auth({ organization }) needs the organization tables: declare them with schema("1").auth({ organizations: true })',
          { plugin: "organizations", hook: "validate" },
        );
      }
    },
    build(ctx) {
      const declared = ctx.schema.auth?.organizations;
      // Without the tables there is nothing to enable: the app simply has no organizations.
      if (!declared) return;
      const { invitationUrl, ...given } = config ?? {};
      let sealed: SealedApp | undefined;
      ctx.hooks.sealed.tap((built) => (sealed = built));
      // Invitations go out through .mail() unless the app sends them itself.
      const sendInvitationEmail = given.sendInvitationEmail ?? invitationMail(() => sealed?.service("mail") as never, invitationUrl ?? `${app.baseUrl ?? ""}/accept-invitation/{id}`);
      (ctx.need("auth-options") as Extend).extend((options) => {
        // An organization() the integrator passed in `plugins` themselves is theirs to configure.
        if (options.plugins?.some((plugin) => plugin.id === "organization")) return options;
        const teams = declared.teams ? { ...given.teams, enabled: true } : { ...given.teams, enabled: false };
        return { ...options, plugins: [...(options.plugins ?? []), organization({ ...given, teams, sendInvitationEmail } as OrganizationsConfig)] };
      });
      const { forget, ...lookup } = membershipLookup(ctx.resources.db);
      // Any write to these tables through this app's database (cascades included) may change a membership.
      ctx.hooks.changed.tap((change) => {
        if (change.table === "member" || change.table === "organization") forget();
      });
      const tenancy: Tenancy = { ...lookup, can: permissionCheck(given) };
      ctx.provide("organizations", tenancy, { context: true });
      // `_admin.organizations.*`, mounted when the app has .admin().
      const ownerRole = given.creatorRole ?? "owner";
      const roles = [...new Set([ownerRole, ...Object.keys(given.roles ?? defaultRoles)])];
      // The hooks of the organization() the library actually runs: this one, or the integrator's own in `plugins`.
      const hooks = (): OrganizationHooks | undefined => {
        const running = sealed?.service("auth")?.options.plugins?.find((plugin) => plugin.id === "organization") as { options?: OrganizationsConfig } | undefined;
        return running ? running.options?.organizationHooks : given.organizationHooks;
      };
      ctx.provide("admin-section:organizations", organizationsAdminSection({ db: ctx.resources.db, kind: ctx.resources.kind, schema: ctx.schema, roles, ownerRole, hooks }));
    },
  });
}

import { defaultRoles } from "better-auth/plugins/organization/access";
import type { Membership, OrganizationsConfig, PermissionStatements } from "./options.js";

type Role = { authorize(request: Record<string, string[]>): { success: boolean } };

/**
 * better-auth's own rule for a member's permissions: any one of their roles granting every action
 * named, with the app's `roles` (or the library's owner/admin/member defaults). Roles created at
 * run time (`dynamicAccessControl`) are not read here: declare the roles rules rely on in `roles`.
 */
export function permissionCheck(config: OrganizationsConfig) {
  const roles = (config.roles ?? defaultRoles) as Record<string, Role | undefined>;
  return (membership: Membership, permissions: PermissionStatements): boolean => {
    const request = Object.fromEntries(Object.entries(permissions).map(([statement, actions]) => [statement, [...actions]]));
    return membership.roles.some((role) => roles[role]?.authorize(request).success === true);
  };
}

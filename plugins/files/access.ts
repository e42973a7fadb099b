import { RpcError, assertRole, hasRole, type AppRpcContext } from "../../kernel/index.js";
import type { FilePermission, FileRecord } from "./options.js";
import type { FileScope } from "./records.js";

/** The part of the organizations plugin's service files read: the caller's confirmed active organization. */
export interface FileTenancy {
  membership(context: AppRpcContext): Promise<{ organizationId: string } | null>;
}

/**
 * Who reaches which file. Before any input is read, the rule's session part: 401 signed out for
 * `authenticated`, `admin` and `owner`, 403 for `admin` without one of `roles`. Per file, `owner`
 * narrows to the caller's files unless they hold one of `roles`.
 */
export class FileAccess {
  constructor(
    readonly roles: readonly string[],
    /** False when the schema's `.files({ owner: false })` has no `userId` column. */
    readonly owned: boolean,
    /**
     * Set when the schema has `.files({ organizations: true })`: where the caller's active
     * organization comes from (undefined service: an app without organizations, so no caller has one).
     */
    readonly tenancy?: { source: FileTenancy | undefined },
  ) {}

  /**
   * The caller's organization as a file query's scope: undefined without the column, else their
   * active organization's id, or null without one (they then reach only files uploaded outside any).
   */
  async organization(context: AppRpcContext): Promise<string | null | undefined> {
    if (!this.tenancy) return undefined;
    return (await this.tenancy.source?.membership(context))?.organizationId ?? null;
  }

  /** Everything that narrows which files a caller reaches by id under `rule`: owner and organization. */
  async scope(rule: FilePermission<any>, context: AppRpcContext): Promise<FileScope> {
    const organization = await this.organization(context);
    return { userId: this.ownerScope(rule, context), ...(organization !== undefined && { organizationId: organization }) };
  }

  gate(rule: FilePermission<any>, context: AppRpcContext): void {
    assertRole(rule === "owner" ? "authenticated" : rule, this.roles, context);
  }

  /** The user id a query must be scoped to, or undefined when the caller may see every file. */
  ownerScope(rule: FilePermission<any>, context: AppRpcContext): string | undefined {
    if (rule !== "owner" || !this.owned || hasRole(context.user, this.roles)) return undefined;
    return context.user?.id ?? "";
  }

  /** A function rule's verdict (403 on false); the other rules were settled by `gate` and `ownerScope`. */
  async check(rule: FilePermission<any>, context: AppRpcContext, row?: FileRecord): Promise<void> {
    if (typeof rule === "function" && !(await rule({ context, row }))) throw new RpcError("FORBIDDEN", { message: "Permission denied" });
  }
}

export function fileNotFound(): RpcError<any, any> {
  return new RpcError("NOT_FOUND", { message: "No file matches" });
}

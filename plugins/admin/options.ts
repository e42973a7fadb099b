/** `.admin(config)`: SPEC.md "AdminConfig", plus the dashboard's switches. */
export interface AdminConfig {
  /**
   * Rows per `_admin.data.list` page: `default` when `take` is absent, `max` the largest `take`.
   * @default { default: 50, max: 200 }
   */
  listLimit?: { default?: number; max?: number };
  /**
   * Most rows one CSV or JSON export may hold (`GET <path>/export/<table>.csv`); a filter that
   * selects more is 400, asking for a narrower one.
   * @default 100000
   */
  exportLimit?: number;
  /**
   * Roles that may call `_admin.*`, the user actions included (`user.role` may be comma-separated).
   * The auth library's own `/api/auth/admin/*` endpoints keep their own rule (its `adminRoles`).
   * @default ["admin"]
   */
  roles?: readonly string[];
  /**
   * Serves the dashboard in the same process; `false` drops it (the API stays).
   * @default true
   */
  ui?: boolean;
  /**
   * Where the dashboard is served.
   * @default "/_admin"
   */
  path?: string;
  /**
   * The first admin: when a user with this email exists (or signs up later) and nobody holds an
   * admin role yet, that user gets the first of `roles`. Never creates a user, never sets a password.
   * @default undefined (no bootstrap)
   */
  firstAdminEmail?: string;
  /**
   * How many of the last requests the dashboard's activity view keeps, in memory, per replica;
   * `false` records nothing (and adds no middleware).
   * @default 500
   */
  activity?: number | false;
  /**
   * Refuses (403) an admin whose account has no second factor on: every `_admin` call, the export
   * and so the dashboard. Needs `schema().auth({ twoFactor: true })`.
   * @default false
   */
  requireTwoFactor?: boolean;
}

export interface AdminSettings {
  limits: { default: number; max: number; maxSkip: number };
  exportLimit: number;
  roles: readonly string[];
  ui: boolean;
  path: string;
  firstAdminEmail: string | undefined;
  activity: number;
  requireTwoFactor: boolean;
}

/** Largest `skip`: deep offsets make the database walk every skipped row. */
const MAX_SKIP = 100_000;

export function adminSettings(config: AdminConfig = {}): AdminSettings {
  const max = config.listLimit?.max ?? 200;
  const path = (config.path ?? "/_admin").replace(/\/+$/, "") || "/_admin";
  return {
    limits: { default: Math.min(config.listLimit?.default ?? 50, max), max, maxSkip: MAX_SKIP },
    exportLimit: Math.max(1, Math.floor(config.exportLimit ?? 100_000)),
    roles: config.roles?.length ? config.roles : ["admin"],
    ui: config.ui ?? true,
    path: path.startsWith("/") ? path : `/${path}`,
    firstAdminEmail: config.firstAdminEmail?.trim().toLowerCase() || undefined,
    requireTwoFactor: config.requireTwoFactor === true,
    activity: config.activity === false ? 0 : Math.max(0, Math.floor(config.activity ?? 500)),
  };
}

import type { Middleware } from "@orpc/server";
import {
  Instrumentation,
  Kernel,
  observedStorage,
  permissionMiddleware,
  rootBuilder,
  type AppKV,
  type AppPlugin,
  type AppSecrets,
  type AppStorage,
  type DatabaseConfig,
  type LoggerOption,
  type OnError,
  type ProcedureBase,
  type ProcedureOptions,
  type RequestEvent,
  type RouteMethod,
} from "../kernel/index.js";
import type { KyselyDatabase, QueryOf, RelationsOf, RowOf, SchemaResult, TableName, TablesOf, WhereOf } from "../kernel/schema/index.js";
import { resourcesPlugin, type ResourceOptions, type ResourcesPlugin } from "../plugins/resources/index.js";
import type { LiveSetting, ResourceRouter, ResourceShape, SoftDeleteSetting } from "./resource-types.js";
import { authPlugin, type AuthConfig } from "../plugins/auth/index.js";
import {
  organizationsPlugin,
  withOrgRule,
  type AdminOrganizationsRouter,
  type OrganizationsConfig,
  type OrganizationsExtras,
  type OrgRule,
  type Tenancy,
} from "../plugins/organizations/index.js";
import { livePlugin } from "../plugins/live/index.js";
import { openapiPlugin, type OpenapiConfig } from "../plugins/openapi/index.js";
import { mcpPlugin, type McpConfig } from "../plugins/mcp/index.js";
import { adminPlugin, type AdminConfig } from "../plugins/admin/index.js";
import { filesPlugin, type AdminFilesRouter, type FileProcedures, type FilesConfig, type FilesService } from "../plugins/files/index.js";
import { jobsPlugin, type AdminJobsRouter, type JobDefinitionOptions, type JobRun, type JobsConfig, type JobsPlugin } from "../plugins/jobs/index.js";
import { webhooksPlugin, type WebhooksConfig } from "../plugins/webhooks/index.js";
import { mailPlugin, type AdminMailRouter, type MailConfig, type Mailer } from "../plugins/mail/index.js";
import { backupsPlugin, type AdminBackupsRouter, type BackupsConfig, type BackupsService } from "../plugins/backups/index.js";
import { auditPlugin, type AdminAuditRouter, type AuditConfig, type AuditService } from "../plugins/audit/index.js";
import { channelsPlugin, type AdminChannelsRouter, type ChannelDefinition, type ChannelParams, type ChannelsConfig, type ChannelsService } from "../plugins/channels/index.js";
import { defaultPreset, type PresetOptions } from "./default.js";
import { RATE_LIMITED_PATHS } from "../plugins/rate-limit/index.js";
import type { CronOptions, JobOutput, WithJob, WithJobs } from "./job-types.js";
import type { AppAdminRouter, BuiltApp, ContextOf, NestName } from "./types.js";

/** A plugin's part of the admin API, `_admin.<name>.*`, in the client type (served when the app has `.admin()`). */
type AdminSection<Name extends string, Procedures> = { _admin: { [K in Name]: Procedures } };

/**
 * What `.auth()` adds where the schema declares organizations (`schema(...).auth({ organizations: true })`):
 * `context.organizations` and `_admin.organizations.*`. Typed from the schema registered before `.auth()`.
 */
type HasOrganizations<S extends AnySchema> = "organization" extends TableName<S> ? true : false;
type OrganizationsContext<S extends AnySchema> = HasOrganizations<S> extends true ? { organizations: Tenancy } : {};
type OrganizationsAdmin<S extends AnySchema> = HasOrganizations<S> extends true ? AdminSection<"organizations", AdminOrganizationsRouter> : {};

export interface AppOptions {
  /** Display name: the OpenAPI title and the value `_admin.meta` reports. */
  name?: string;
  /** Public origin; the default base URL of the auth library. */
  baseUrl?: string;
  /** Query-builder dialect plus its family (`embedded()` from `trellis/embedded` gives both). */
  db: DatabaseConfig;
  /** Browser origins allowed to reach the app; without it no CORS header is set. */
  cors?: PresetOptions["cors"];
  storage?: AppStorage;
  secrets?: AppSecrets<any>;
  kv?: AppKV;
  /**
   * Called for unexpected failures only, never for deliberate `RpcError`s; `info` carries the
   * source and, when a request failed, its id, method, path and procedure.
   * @default logs the failure and its stack through `logger` (on the console when logging is off)
   */
  onError?: OnError;
  /**
   * Where request lines and failures go: pino (`logger: pino()`), or anything with its
   * `info/warn/error/child` shape; `false` for nothing; `"pretty"` or `"json"` for the built-in
   * logger in that format.
   * @default the built-in logger: pretty in a terminal, JSON lines when the output is not a terminal
   * or `NODE_ENV=production`; none under a test runner (Vitest, Jest, `node --test`, `NODE_ENV=test`)
   */
  logger?: LoggerOption;
  /**
   * Mounts `GET /health`; `false` omits it.
   * @default true
   */
  health?: PresetOptions["health"];
  /**
   * Largest request body in bytes; larger ones get 413.
   * @default 1048576 (1 MiB)
   */
  bodyLimit?: number;
  /** Per-caller rate limit on `/rpc/**` and `/rest/**` (fixed window). Off by default. */
  rateLimit?: PresetOptions["rateLimit"];
  /**
   * Traces through `@opentelemetry/api` (on when an SDK is registered) and Prometheus metrics at
   * `/metrics` (off until `metrics` is set); `false` leaves the telemetry plugin out. See docs/observability.md.
   * @default { traces: "auto", metrics: false }
   */
  telemetry?: PresetOptions["telemetry"];
}

/**
 * The facade: it creates the kernel, registers the preset's plugins in a fixed order, and forwards
 * each builder call to the kernel or to the plugin that owns it. It holds no feature logic.
 *
 * Type parameters grow with each call: the schema `S` with `.schema()`, `Extra` with `.middleware()`,
 * `Router` by one intersection per `.procedure()` or `.resource()`.
 */
type AnySchema = SchemaResult<any, any>;
type NoSchema = SchemaResult<{}, {}>;
type Ctx<S extends AnySchema, Extra> = ContextOf<KyselyDatabase<S>, Extra, QueryOf<S>>;
type Built<S extends AnySchema, Router> = BuiltApp<Router, KyselyDatabase<S>, QueryOf<S>>;
type ColumnName<S extends AnySchema, N extends TableName<S>> = keyof TablesOf<S>[N] & string;
type RelationName<S extends AnySchema, N extends TableName<S>> = keyof RelationsOf<S, N> & string;

/** The options of `.resource()` whose literal values type its procedures. */
interface ResourceTyping<Owner, Writable, Readonly, Includable, Live, Tenant = never, SoftDelete = false, History = false> {
  ownerColumn?: Owner;
  tenant?: Tenant;
  writable?: Writable[];
  readonly?: Readonly[];
  includable?: Array<Includable | { relation: Includable; scoped?: boolean }>;
  live?: Live;
  softDelete?: SoftDelete;
  history?: History;
}

export class App<S extends AnySchema = NoSchema, Extra = {}, Router = {}> {
  declare readonly "~router": Router;
  readonly kernel: Kernel;
  readonly options: AppOptions;
  /** The builder procedures receive: the root builder plus every `.middleware()` so far. */
  #base: ProcedureBase<any> = rootBuilder();
  #resources: ResourcesPlugin | undefined;
  #jobs: JobsPlugin | undefined;
  /** The paths the rate limit counts, read when the app is built: `.mcp({ path })` adds its own. */
  readonly #limitedPaths: string[] = [...RATE_LIMITED_PATHS];

  constructor(options: AppOptions) {
    this.options = options;
    const { secrets, kv } = options;
    // Storage calls are observed (spans, metrics) through the kernel's instrumentation.
    const instrumentation = new Instrumentation();
    const storage = options.storage && observedStorage(options.storage, instrumentation);
    // The constructor's stores are services like any other: on every request context under their names.
    this.kernel = new Kernel({ ...options, services: { storage, secrets, kv, instrumentation } });
    // SPEC: `_admin` belongs to the admin plugin, whether or not `.admin()` is called.
    this.kernel.reserve("_admin", "admin");
    for (const plugin of defaultPreset(options, this.#limitedPaths)) this.kernel.use(plugin);
  }

  /** Registers a schema version: one migration step. The latest version types `context.db`. */
  schema<V extends AnySchema>(version: V): App<V, Extra, Router> {
    this.kernel.schema(version);
    return this as unknown as App<V, Extra, Router>;
  }

  /** Adds procedure middleware; what it passes to `next({ context })` reaches every later procedure. */
  middleware<Out extends Record<string, unknown>>(
    middleware: Middleware<Ctx<S, Extra>, Out, unknown, unknown, any, any>,
  ): App<S, Extra & Out, Router> {
    this.#base = this.#base.use(middleware as never);
    return this as unknown as App<S, Extra & Out, Router>;
  }

  /** Registers a procedure; dots in `name` become path segments (`user.me` is `POST /rpc/user/me`). */
  procedure<N extends string, P>(
    name: N,
    define: (base: ProcedureBase<Ctx<S, Extra>>) => P,
    given?: Omit<ProcedureOptions<Ctx<S, Extra>>, "permission"> & { permission?: ProcedureOptions<Ctx<S, Extra>>["permission"] | OrgRule },
  ): App<S, Extra, Router & NestName<N, P>> {
    // An organization rule ("member", "org:admin", { orgRole }, { permission }) is a function underneath.
    const options = given && ({ ...given, permission: withOrgRule(given.permission, true) } as ProcedureOptions<Ctx<S, Extra>>);
    const permission = options?.permission ?? "public";
    const base = permission === "public" ? this.#base : this.#base.use(permissionMiddleware(options as ProcedureOptions<any>));
    if (permission !== "public") {
      const label = typeof permission === "function" ? "a permission function" : `"${permission}"`;
      this.kernel.requireSession(`procedure "${name}" (permission ${label})`);
    }
    this.kernel.procedure(name, define(base as ProcedureBase<Ctx<S, Extra>>) as never);
    return this as unknown as App<S, Extra, Router & NestName<N, P>>;
  }

  /** Mounts a raw route, matched before `/rpc/**` and every built-in route. */
  route(
    method: RouteMethod,
    path: string,
    handler: (event: RequestEvent, context: Ctx<S, Extra>) => unknown,
  ): this {
    this.kernel.route({ method, path, handler: handler as never });
    return this;
  }

  /**
   * Mounts the auth library at `/api/auth/**` and resolves `context.user` once per request;
   * `organization` holds the organization plugin's options (on when the schema declares organizations).
   */
  auth(config: AuthConfig & { organization?: OrganizationsConfig & OrganizationsExtras }): App<S, Extra & OrganizationsContext<S>, Router & OrganizationsAdmin<S>> {
    const { organization, ...auth } = config;
    this.kernel.use(authPlugin(auth, { baseUrl: this.options.baseUrl, name: this.options.name, corsOrigins: this.options.cors?.origins }));
    this.kernel.use(organizationsPlugin(organization, { baseUrl: this.options.baseUrl }));
    return this as never;
  }

  /**
   * The admin API under `_admin` (every call needs a session holding one of `roles`) and, unless
   * `ui: false`, the dashboard at `path` (default `/_admin`). Needs `.auth()`.
   */
  admin(config: AdminConfig = {}): App<S, Extra, Router & AppAdminRouter> {
    this.kernel.use(adminPlugin(config));
    return this as never;
  }

  /**
   * Generates `{name}.list/get/create/update/delete` for the table `name` of the latest schema.
   * Middleware registered before this call applies to the generated procedures.
   */
  resource<
    N extends TableName<S>,
    const Owner extends ColumnName<S, N> = never,
    const Writable extends ColumnName<S, N> = never,
    const Readonly extends ColumnName<S, N> = never,
    const Includable extends RelationName<S, N> = never,
    const Live extends LiveSetting = false,
    const Tenant extends ColumnName<S, N> = never,
    const SoftDelete extends SoftDeleteSetting = false,
    const History extends boolean = false,
  >(
    name: N,
    options: ResourceOptions<Ctx<S, Extra>, RowOf<S, N>, WhereOf<S, N> | OrgRule> & ResourceTyping<Owner, Writable, Readonly, Includable, Live, Tenant, SoftDelete, History> = {},
    // The tenant column is server-controlled like the owner column: absent from create and update input.
  ): App<S, Extra, Router & { [K in N]: ResourceRouter<S, N, ResourceShape<Owner | Tenant, Writable, Readonly, Includable, Live, SoftDelete, History>> }> {
    if (!this.#resources) this.kernel.use((this.#resources = resourcesPlugin()));
    const permissions = options.permissions && Object.fromEntries(Object.entries(options.permissions).map(([action, rule]) => [action, withOrgRule(rule, false)]));
    this.#resources.add(name, { ...options, ...(permissions && { permissions }) } as ResourceOptions<any, any>, this.#base);
    // A streaming resource brings the live plugin (cross-process notifications), once.
    if (options.live && !this.kernel.plugins.some((plugin) => plugin.name === "live")) this.kernel.use(livePlugin());
    return this as never;
  }

  /**
   * The plain-JSON REST surface under `/rest/**`, its OpenAPI 3.1 document at `/openapi.json` and a
   * reference page at `/docs`. Needs the optional peers `@orpc/openapi`, `@orpc/zod`, `@orpc/json-schema`
   * (and `swagger-ui-dist` for the page).
   */
  openapi(config: OpenapiConfig = {}): this {
    this.kernel.use(openapiPlugin(config));
    return this;
  }

  /**
   * An MCP server (Streamable HTTP) at `/mcp` exposing the procedures tagged with `mcp.tool()`,
   * `mcp.resource()` or `mcp.prompt()`. Needs the optional peers `@modelcontextprotocol/sdk` and `@orpc/zod`.
   */
  mcp(config: McpConfig = {}): this {
    this.kernel.use(mcpPlugin(config));
    // Tool calls are procedure calls: the rate limit counts them wherever the endpoint is served.
    if (config.enabled !== false && config.path && !this.#limitedPaths.includes(config.path)) this.#limitedPaths.push(config.path);
    return this;
  }

  /**
   * File uploads and downloads over the schema's `.files()` tables: `file.upload/list/get/delete/
   * attach/detach` and `GET /files/:id`. Needs a storage (here or on the constructor).
   */
  files(config: FilesConfig<Ctx<S, Extra>> = {}): App<S, Extra & { files: FilesService }, Router & { file: FileProcedures } & AdminSection<"files", AdminFilesRouter>> {
    this.kernel.use(filesPlugin(config as FilesConfig<any>));
    return this as never;
  }

  /**
   * Background jobs and cron on pg-boss, in the app's own PostgreSQL database (embedded or a
   * server; SQLite is refused at build). Adds `context.jobs`. Needs the optional peer `pg-boss` 10.
   */
  jobs(config: JobsConfig = {}): App<S, WithJobs<Extra>, Router & AdminSection<"jobs", AdminJobsRouter>> {
    if (this.#jobs) this.#jobs.reconfigure(config);
    else this.kernel.use((this.#jobs = jobsPlugin(config)));
    return this as never;
  }

  /**
   * Defines a job kind; procedures registered after this call can `context.jobs.send(name, data)`,
   * typed by `input`. The handler gets `{ data, context, job, signal }`.
   */
  job<const N extends string, O extends JobDefinitionOptions<any>>(
    name: N,
    options: O,
    handler: (run: JobRun<JobOutput<O>, Ctx<S, WithJob<Extra, N, O>>>) => unknown,
  ): App<S, WithJob<Extra, N, O>, Router & AdminSection<"jobs", AdminJobsRouter>> {
    this.#jobsPlugin().job(name, options, handler as never);
    return this as never;
  }

  /** Runs `handler` on a cron schedule (`"*\/5 * * * *"`), once per tick across every replica. */
  cron(name: string, expression: string, handler: (run: JobRun<undefined, Ctx<S, WithJobs<Extra>>>) => unknown, options: CronOptions = {}): App<S, WithJobs<Extra>, Router & AdminSection<"jobs", AdminJobsRouter>> {
    this.#jobsPlugin().cron(name, expression, handler as never, options);
    return this as never;
  }

  /** Outgoing webhooks: each committed change on the endpoints' tables, delivered and signed (Standard Webhooks). */
  webhooks(config: WebhooksConfig): App<S, WithJobs<Extra>, Router & AdminSection<"jobs", AdminJobsRouter>> {
    this.#jobsPlugin();
    this.kernel.use(webhooksPlugin(config));
    return this as never;
  }

  #jobsPlugin(): JobsPlugin {
    if (!this.#jobs) this.kernel.use((this.#jobs = jobsPlugin()));
    return this.#jobs;
  }

  /**
   * Email: `context.mail.send({ to, subject, text, html })`, and the auth flows that need it
   * (verification, password reset, change of email; sign-in by link or code when asked), sent after
   * the response. The transport is an SMTP URL, or the development outbox (the default outside
   * production) that keeps messages in the app's database and prints their links.
   */
  mail(config: MailConfig): App<S, Extra & { mail: Mailer }, Router & AdminSection<"mail", AdminMailRouter>> {
    this.kernel.use(mailPlugin(config));
    return this as never;
  }

  /**
   * Backups of the database while the app serves (the embedded database's tarball, or pg_dump on
   * PostgreSQL): `every` schedules them (through `.jobs()` when the app has it), `to` a directory
   * or `"storage"`, `keep` the newest N. Adds `context.backups` and `_admin.backups.*`.
   */
  backups(config: BackupsConfig = {}): App<S, Extra & { backups: BackupsService }, Router & AdminSection<"backups", AdminBackupsRouter>> {
    this.kernel.use(backupsPlugin(config));
    return this as never;
  }

  /**
   * The audit log: who inserted, updated or deleted which row of the audited tables, when, through
   * which surface, with the columns before and after (secrets redacted), written by database
   * triggers in the same transaction. Adds `_admin.audit.*` (list, get, restore) and
   * `GET /_admin/audit/export`; `retain` deletes older entries hourly. See docs/audit.md.
   */
  audit(config: AuditConfig = {}): App<S, Extra & { audit: AuditService }, Router & AdminSection<"audit", AdminAuditRouter>> {
    this.kernel.use(auditPlugin(config));
    return this as never;
  }

  /**
   * Realtime channels: each key a pattern (`"room:{roomId}"`) with its `join` and `send` rules,
   * `presence`, and a zod schema per event. Clients connect through `serve()`'s socket at
   * `/channels` (or its SSE stream); procedures, jobs and hooks publish with
   * `context.channels.publish(channel, event, payload)`. See docs/channels.md.
   */
  channels<const D extends { [P in keyof D & string]: ChannelDefinition<ChannelParams<P>, any, OrgRule> }>(
    definitions: D,
    config: ChannelsConfig = {},
  ): App<S, Extra & { channels: ChannelsService<D> }, Router & { "~channels": D } & AdminSection<"channels", AdminChannelsRouter>> {
    // Pages that may open a socket with the caller's cookies: the app's own origin and the CORS origins.
    const origins = [...(this.options.cors?.origins ?? []), ...(this.options.baseUrl ? [new URL(this.options.baseUrl).origin] : [])];
    // Organization rules ("member", "org:admin", { orgRole }, { permission }) become their functions here, as for resources.
    const resolved = Object.fromEntries(
      Object.entries(definitions as Record<string, ChannelDefinition<any, any, OrgRule>>).map(([pattern, definition]) => [
        pattern,
        { ...definition, join: withOrgRule(definition.join, true), send: withOrgRule(definition.send, true) },
      ]),
    );
    this.kernel.use(channelsPlugin(resolved as never, { ...config, origins }));
    return this as never;
  }

  /** Registers a plugin; a duplicate name throws here. */
  use(plugin: AppPlugin): this {
    this.kernel.use(plugin);
    return this;
  }

  /** Finalises the app. Throws on any build-time rule; does not migrate. */
  build(): Built<S, Router> {
    return this.kernel.build() as unknown as Built<S, Router>;
  }

  /** Builds, waits for the database, and applies pending migrations (throws when one fails). */
  async start(): Promise<Built<S, Router>> {
    const built = this.kernel.build();
    try {
      await built.ready();
      const { error } = await built.migrator.migrateToLatest();
      if (error) throw error instanceof Error ? error : new Error(String(error));
    } catch (error) {
      // Whatever stopped the start (setup, a migration) releases the database (an embedded one's thread and lock).
      await built.close().catch(() => {});
      throw error;
    }
    return built as unknown as Built<S, Router>;
  }
}

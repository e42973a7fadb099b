import { isMemoryStorage, underTestRunner, type AppOverview, type Logger, type ServiceOf } from "../kernel/index.js";

/** What the jobs service says about itself (`.jobs()`): queue names and cron schedules. */
export type JobsOverview = ReturnType<NonNullable<ServiceOf<"jobs">>["describe"]>;

/**
 * The start banner: one block a person reads in a terminal, saying where the app listens, what
 * database it uses and where, which schema version it is at (and what was just migrated), its
 * plugins in order and each surface with its paths.
 */
export function formatBanner(url: string, about: AppOverview, notes: BannerNotes = {}): string {
  const { database, schema } = about;
  const rows: [string, string][] = [
    ["database", `${database.engine ?? database.kind}${database.location ? `  ${database.location}` : ""}`],
    ["schema", schemaLine(schema)],
    ["plugins", about.plugins.join(" > ") || "(none)"],
    ["procedures", String(about.procedures)],
  ];
  const { jobs } = notes;
  if (jobs) {
    rows.push(["queues", jobs.queues.join(", ") || "(none)"]);
    if (jobs.schedules.length) rows.push(["schedules", jobs.schedules.map(({ name, cron, tz }) => `${name} "${cron}"${tz === "UTC" ? "" : ` ${tz}`}`).join(", ")]);
  }
  const surfaces = about.surfaces.map(({ owner, routes }) => `${(owner === "app" ? "routes" : owner).padEnd(12)}${summarise(routes).join(", ")}`);
  const lines = [`${about.name} is listening on ${url}`, ...rows.map(([label, value]) => `  ${label.padEnd(12)}${value}`)];
  surfaces.forEach((line, index) => lines.push(`  ${(index === 0 ? "surfaces" : "").padEnd(12)}${line}`));
  const open = pagesOf(url, about);
  open.forEach(([label, address], index) => lines.push(`  ${(index === 0 ? "open" : "").padEnd(12)}${label.padEnd(12)}${address}`));
  for (const warning of notes.warnings ?? []) lines.push(`  ${"warning".padEnd(12)}${warning}`);
  return lines.join("\n");
}

/** What the banner says beyond the overview: things the operator should act on. */
export interface BannerNotes {
  warnings?: string[];
  /** The job queues and cron schedules (`.jobs()`); `announce` reads them from the jobs service when absent. */
  jobs?: JobsOverview;
}

/** The pages a person opens in a browser or points a client at, when their plugins are on. */
function pagesOf(url: string, about: AppOverview): [string, string][] {
  const routes = about.surfaces.flatMap(({ owner, routes }) => routes.map((route) => ({ owner, path: route.slice(route.indexOf("/")) })));
  const page = (owner: string, path: string) => routes.find((route) => route.owner === owner && (route.path === path || route.path.startsWith(`${path}/`)));
  const pages: [string, string][] = [];
  if (page("openapi", "/docs")) pages.push(["API docs", `${url}/docs`]);
  if (page("admin", "/_admin")) pages.push(["dashboard", `${url}/_admin`]);
  const mcp = routes.find((route) => route.owner === "mcp");
  if (mcp) pages.push(["MCP", `${url}${mcp.path}`]);
  return pages;
}

/** What the banner and `trellis doctor` say of an app whose storage keeps its bytes in memory. */
export function memoryStorageWarning(storage: unknown): string | undefined {
  if (!isMemoryStorage(storage)) return undefined;
  return "the storage is memoryStorage(): stored files are lost at every restart while their rows stay (downloads answer 410); keep them on disk or S3 (fromStore, fromObjectStore in trellis/storage)";
}

/**
 * Warnings worth a line at start: a development secret (short, or a placeholder), storage that
 * keeps files in memory and, when the admin plugin is on, that nobody holds an admin role yet,
 * with the command that makes one.
 */
export async function bannerNotes(built: { sealed: { service(key: string): unknown }; db: any; overview(): AppOverview }): Promise<BannerNotes> {
  const warnings: string[] = [];
  const secret = (built.sealed.service("auth") as { options?: { secret?: string } } | undefined)?.options?.secret;
  if (secret !== undefined && (secret.length < 32 || /change-?me|development|example/i.test(secret))) {
    warnings.push("the auth secret is a development one: set AUTH_SECRET to 32+ random characters (openssl rand -base64 32)");
  }
  const memory = memoryStorageWarning(built.sealed.service("storage"));
  if (memory) warnings.push(memory);
  const admin = built.overview().surfaces.some(({ owner }) => owner === "admin");
  if (admin) {
    try {
      const holder = await built.db.selectFrom("user").select("id").where("role", "like", "%admin%").limit(1).executeTakeFirst();
      if (!holder) warnings.push("nobody holds the admin role yet: run `npx trellis admin create <email>` (or sign up with the firstAdminEmail address)");
    } catch {
      // No user table (or no database yet): nothing to say.
    }
  }
  return { warnings };
}

/** Routes under one first segment, when there are more than two, as `/rest/** (13 routes)`: one line stays readable. */
function summarise(routes: readonly string[]): string[] {
  const groups = new Map<string, string[]>();
  for (const route of routes) {
    const path = route.slice(route.indexOf("/"));
    const head = `/${path.split("/")[1] ?? ""}`;
    groups.set(head, [...(groups.get(head) ?? []), route]);
  }
  return [...groups].flatMap(([head, members]) => (members.length > 2 ? [`${head}/** (${members.length} routes)`] : members));
}

function schemaLine(schema: AppOverview["schema"]): string {
  if (schema.version === undefined) return "no schema registered";
  const head = `version ${schema.version} (${schema.versions} registered)`;
  if (schema.applied === undefined) return `${head}, not migrated by this process`;
  return schema.applied.length ? `${head}, migrations applied now: ${schema.applied.join(", ")}` : `${head}, up to date`;
}

/**
 * Shows the banner as `serve()`'s `banner` option says: printed as a block for a person at a
 * terminal (or when nothing logs), as one structured line through the app's logger otherwise (JSON
 * logs stay one record per line), handed to a function, or not at all. Returns the text.
 */
export function announce(
  built: { overview(): AppOverview; sealed: { logger: Logger | undefined; service<K extends string>(key: K): ServiceOf<K> | undefined } },
  url: string,
  option: boolean | ((text: string) => void) | undefined,
  given: BannerNotes = {},
): string {
  const about = built.overview();
  const notes: BannerNotes = { ...given, jobs: given.jobs ?? built.sealed.service("jobs")?.describe() };
  const text = formatBanner(url, about, notes);
  if (option === false || (option === undefined && underTestRunner())) return text;
  if (typeof option === "function") {
    option(text);
    return text;
  }
  const logger = built.sealed.logger;
  const terminal = process.stdout.isTTY && process.env.NODE_ENV !== "production";
  const warnings = notes.warnings?.length ? { warnings: notes.warnings } : {};
  const jobs = notes.jobs ? { jobs: notes.jobs } : {};
  if (logger && !terminal) logger.info({ url, ...about, ...warnings, ...jobs }, `${about.name} is listening on ${url}`);
  else process.stdout.write(`${text}\n\n`);
  return text;
}

import { underTestRunner, type AppOverview, type Logger, type ServiceOf } from "../kernel/index.js";

/** What the jobs service says about itself (`.jobs()`): queue names and cron schedules. */
export type JobsOverview = ReturnType<NonNullable<ServiceOf<"jobs">>["describe"]>;

/**
 * The start banner: one block a person reads in a terminal, saying where the app listens, what
 * database it uses and where, which schema version it is at (and what was just migrated), its
 * plugins in order and each surface with its paths.
 */
export function formatBanner(url: string, about: AppOverview, jobs?: JobsOverview): string {
  const { database, schema } = about;
  const rows: [string, string][] = [
    ["database", `${database.engine ?? database.kind}${database.location ? `  ${database.location}` : ""}`],
    ["schema", schemaLine(schema)],
    ["plugins", about.plugins.join(" > ") || "(none)"],
    ["procedures", String(about.procedures)],
  ];
  if (jobs) {
    rows.push(["queues", jobs.queues.join(", ") || "(none)"]);
    if (jobs.schedules.length) rows.push(["schedules", jobs.schedules.map(({ name, cron, tz }) => `${name} "${cron}"${tz === "UTC" ? "" : ` ${tz}`}`).join(", ")]);
  }
  const surfaces = about.surfaces.map(({ owner, routes }) => `${(owner === "app" ? "routes" : owner).padEnd(12)}${summarise(routes).join(", ")}`);
  const lines = [`${about.name} is listening on ${url}`, ...rows.map(([label, value]) => `  ${label.padEnd(12)}${value}`)];
  surfaces.forEach((line, index) => lines.push(`  ${(index === 0 ? "surfaces" : "").padEnd(12)}${line}`));
  return lines.join("\n");
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
): string {
  const about = built.overview();
  const jobs = built.sealed.service("jobs")?.describe();
  const text = formatBanner(url, about, jobs);
  if (option === false || (option === undefined && underTestRunner())) return text;
  if (typeof option === "function") {
    option(text);
    return text;
  }
  const logger = built.sealed.logger;
  const terminal = process.stdout.isTTY && process.env.NODE_ENV !== "production";
  if (logger && !terminal) logger.info({ url, ...about, ...(jobs ? { jobs } : {}) }, `${about.name} is listening on ${url}`);
  else process.stdout.write(`${text}\n\n`);
  return text;
}

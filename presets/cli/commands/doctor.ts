import { isLoopbackHost } from "../../../kernel/request/client-address.js";
import { appTarget, quickServer, shortLived } from "../app-target.js";
import { runRemote } from "../control/client.js";
import type { CommandTarget } from "../control/commands.js";
import { green, red, say, yellow } from "../output.js";
import { findProject } from "../project.js";

type Verdict = "ok" | "warn" | "fail";
interface Check {
  name: string;
  verdict: Verdict;
  detail: string;
}

/**
 * `trellis doctor`: what would stop this project from starting, or from being safe in production.
 * Beside a running server that holds the embedded database, the database's checks run in it.
 */
export async function doctor(): Promise<number> {
  const checks: Check[] = [];
  const add = (name: string, verdict: Verdict, detail: string) => checks.push({ name, verdict, detail });

  const [major, minor] = process.versions.node.split(".").map(Number) as [number, number];
  add("node", major > 20 || (major === 20 && minor >= 19) ? "ok" : "fail", `${process.version} (Trellis needs >= 20.19)`);

  // The project's .env is loaded first: the secret is usually there.
  let project: ReturnType<typeof findProject> | undefined;
  try {
    project = findProject();
  } catch (error) {
    add("project", "fail", (error as Error).message);
  }
  const production = process.env.NODE_ENV === "production";
  const secret = process.env.AUTH_SECRET;
  if (!secret) add("secret", "fail", "AUTH_SECRET is not set (generate one: openssl rand -base64 32)");
  else if (secret.length < 32) add("secret", production ? "fail" : "warn", `AUTH_SECRET has ${secret.length} characters; use at least 32`);
  else add("secret", "ok", `AUTH_SECRET set (${secret.length} characters)`);

  let built: any;
  let server = project && quickServer(project);
  if (project && server) {
    // The running server's app is built already: it reports the app and its database.
    print(checks);
    const remote = await runRemote(server, "doctor", { app: true });
    return Math.max(remote, checks.some((check) => check.verdict === "fail") ? 1 : 0);
  }
  if (project) {
    shortLived();
    try {
      const target = await appTarget(project, { database: true });
      server = target.server;
      built = target.app.build();
      add("app", "ok", appLine(built));
    } catch (error) {
      const failure = error as Error & { code?: string };
      // A missing peer is reported at build with the install line in its message.
      add("app", "fail", `${failure.code ? `${failure.code}: ` : ""}${failure.message}`);
    }
  }
  if (built && !server) checks.push(...(await databaseChecks(built)));
  print(checks);
  let code = checks.some((check) => check.verdict === "fail") ? 1 : 0;
  if (built && server) code = Math.max(code, await runRemote(server, "doctor", {}));
  await built?.close().catch(() => {});
  return code;
}

/** The checks that need the database: run where it is open (here, or in the server that holds it). */
export async function databaseChecksOn({ built }: CommandTarget, { app }: { app?: boolean }): Promise<number> {
  const checks = await databaseChecks(built);
  if (app) checks.unshift({ name: "app", verdict: "ok", detail: appLine(built) });
  print(checks);
  return checks.some((check) => check.verdict === "fail") ? 1 : 0;
}

/**
 * The address the server listens on (`HOST`, `PORT`) when `baseUrl` is a local address on another
 * port: the auth library builds its links from `baseUrl`, and in production trusts only its origin.
 */
function servedElsewhere(baseUrl: string | undefined): string | undefined {
  const { PORT, HOST } = process.env;
  if (!baseUrl || !PORT) return undefined;
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return undefined;
  }
  if (!isLoopbackHost(url.hostname) || (url.port || (url.protocol === "https:" ? "443" : "80")) === PORT) return undefined;
  const host = !HOST || HOST === "0.0.0.0" || HOST === "::" ? url.hostname : HOST;
  return `${url.protocol}//${host}:${PORT}`;
}

async function databaseChecks(built: any): Promise<Check[]> {
  // Loaded where the checks run (they reach the kernel's index): `trellis doctor` beside a running server only asks it.
  const [{ memoryStorageWarning }, { isLocalBaseUrl }] = await Promise.all([import("../../banner.js"), import("../../production-checks.js")]);
  const checks: Check[] = [];
  const add = (name: string, verdict: Verdict, detail: string) => checks.push({ name, verdict, detail });
  try {
    await built.sealed.ready();
    await built.db.selectNoFrom((eb: any) => eb.lit(1).as("one")).execute();
    const { database } = built.overview();
    add("database", "ok", `${database.engine ?? database.kind} reachable${database.location ? ` (${database.location})` : ""}`);
    const pending = ((await built.migrator.getMigrations()) as { executedAt?: Date }[]).filter((m) => !m.executedAt).length;
    add("migrations", pending ? "warn" : "ok", pending ? `${pending} version(s) pending: trellis migrate up` : "up to date");
  } catch (error) {
    const failure = error as Error & { code?: string };
    add("database", "fail", `${failure.code ? `${failure.code}: ` : ""}${failure.message}`);
  }
  const baseUrl: string | undefined = built.sealed.baseUrl;
  const local = !baseUrl || isLocalBaseUrl(baseUrl);
  const memory = memoryStorageWarning(built.sealed.service("storage"));
  if (memory) add("storage", "warn", memory);
  const served = servedElsewhere(baseUrl);
  if (process.env.NODE_ENV === "production" && local) add("baseUrl", "warn", `${baseUrl ?? "unset"} in production: set APP_BASE_URL to the public origin`);
  else if (served) add("baseUrl", "warn", `${baseUrl}, but PORT=${process.env.PORT} serves ${served}: the auth library's links point at the wrong port (and in production it refuses that origin); set APP_BASE_URL=${served}`);
  else add("baseUrl", "ok", baseUrl ?? "unset");
  return checks;
}

function print(checks: Check[]): void {
  const mark: Record<Verdict, string> = { ok: green("ok  "), warn: yellow("warn"), fail: red("fail") };
  for (const check of checks) say(`${mark[check.verdict]}  ${check.name.padEnd(11)} ${check.detail}`);
}

const appLine = (built: any) => `${built.overview().name}: ${built.describe().plugins.map((p: { name: string }) => p.name).join(", ")}`;

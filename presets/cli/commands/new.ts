import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { cp, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { basename, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { CliError, bold, dim, green, say } from "../output.js";
import { AUTH_METHODS, AUTH_PEERS, type AuthMethod } from "./auth-methods.js";
import { SURFACES, SURFACE_PEERS, type Surface } from "./surfaces.js";

const DEV_TOOLS = ["typescript", "tsx", "vitest", "@types/node"];

/**
 * What `trellis new --template` can write: `app` (private notes per user, the default) or `saas`
 * (team tasks: organizations, invitations by mail, roles, tenant-scoped projects and tasks). A
 * template other than `app` is a folder of files laid over the `app` template's.
 */
export const TEMPLATES = ["app", "saas"] as const;
export type Template = (typeof TEMPLATES)[number];

export interface NewOptions {
  surfaces?: string;
  /** Sign-in methods beside email and password: github, google, passkeys, 2fa. */
  auth?: string;
  plugin?: boolean;
  /** The app to write: `app` (the default) or `saas`. */
  template?: string;
  /** How the new project depends on Trellis: a version range, a tarball path or a git URL. */
  trellis?: string;
  install?: boolean;
}

/** `trellis new <dir>`: a project (or, with --plugin, an in-house plugin package) that works on the first try. */
export async function create(dir: string, options: NewOptions): Promise<number> {
  const target = resolve(dir);
  if (existsSync(target) && readdirSync(target).length > 0) {
    throw new CliError("CLI_DIR_NOT_EMPTY", `${dir} exists and is not empty.`, "Choose a new folder name, or empty this one.");
  }
  const surfaces = parseSurfaces(options.surfaces);
  if (options.plugin && surfaces.length) throw new CliError("CLI_BAD_OPTION", "--surfaces applies to apps, not to --plugin packages.", undefined, 2);
  const auth = parseList(options.auth, AUTH_METHODS, "sign-in method");
  if (options.plugin && auth.length) throw new CliError("CLI_BAD_OPTION", "--auth applies to apps, not to --plugin packages.", undefined, 2);
  const [template = "app"] = parseList(options.template, TEMPLATES, "template");
  if (options.template?.includes(",")) throw new CliError("CLI_BAD_OPTION", "--template takes one template.", `Choose from: ${TEMPLATES.join(", ")}.`, 2);
  if (options.plugin && options.template) throw new CliError("CLI_BAD_OPTION", "--template applies to apps, not to --plugin packages.", undefined, 2);
  const trellis = trellisManifest();
  const name = basename(target).toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/^-+|-+$/g, "") || "trellis-app";
  const title = name.replace(/(^|-)(\w)/g, (_, space: string, letter: string) => `${space ? " " : ""}${letter.toUpperCase()}`);
  const kind = options.plugin ? "plugin" : "app";
  await mkdir(target, { recursive: true });
  await cp(join(templatesDir(), kind), target, { recursive: true });
  if (kind === "app" && template !== "app") await cp(join(templatesDir(), template), target, { recursive: true });
  for (const file of listFiles(target)) {
    const text = await readFile(file, "utf8");
    await writeFile(file, render(text, { name, title, surfaces, auth, template }));
  }
  await rename(join(target, "gitignore"), join(target, ".gitignore"));
  if (kind === "app") {
    await rename(join(target, "env.example"), join(target, ".env.example"));
    const secret = randomBytes(32).toString("base64");
    // Owner-only: it holds AUTH_SECRET.
    await writeFile(join(target, ".env"), (await readFile(join(target, ".env.example"), "utf8")).replace(/^AUTH_SECRET=$/m, `AUTH_SECRET=${secret}`), { mode: 0o600 });
  }
  const spec = options.trellis ?? inferredSpec(trellis.version, target);
  await writeFile(join(target, "package.json"), `${JSON.stringify(manifestFor(kind, name, spec, surfaces, auth, trellis), null, 2)}\n`);

  say(`${green("created")} ${bold(relative(process.cwd(), target) || ".")} ${dim(`(${kind === "app" ? template : kind}${surfaces.length ? `: ${surfaces.join(", ")}` : ""})`)}`);
  if (options.install !== false) {
    say(dim("npm install ..."));
    const result = spawnSync("npm", ["install", "--no-audit", "--no-fund"], { cwd: target, stdio: "inherit" });
    if (result.status !== 0) throw new CliError("CLI_INSTALL_FAILED", `npm install failed in ${dir}.`, `Run \`npm install\` in ${dir} to see why.`);
  }
  say(`\nnext:\n  cd ${relative(process.cwd(), target) || "."}${options.install === false ? "\n  npm install" : ""}\n  npm test\n  npm run dev`);
  return 0;
}

function parseSurfaces(list: string | undefined): Surface[] {
  return parseList(list, SURFACES, "surface");
}

function parseList<T extends string>(list: string | undefined, known: readonly T[], what: string): T[] {
  if (!list) return [];
  const asked = list.split(",").map((entry) => entry.trim()).filter(Boolean);
  const unknown = asked.filter((entry) => !known.includes(entry as T));
  if (unknown.length) throw new CliError("CLI_BAD_OPTION", `Unknown ${what} ${unknown.map((u) => `"${u}"`).join(", ")}.`, `Choose from: ${known.join(", ")}.`, 2);
  return [...new Set(asked)] as T[];
}

/**
 * Keeps or drops the lines marked `// surface:<name>` (kept when chosen) and `// surface:-<name>`
 * (kept when not), the same with `auth:` for sign-in methods and `template:` for the template
 * (`#` in .env files), and fills in the project's name. Templates stay plain files a reader can open.
 */
export function render(text: string, values: { name: string; title: string; surfaces: readonly string[]; auth?: readonly string[]; template?: string }): string {
  const chosenAuth = authMarkers(values.auth ?? []);
  const lines: string[] = [];
  for (const line of text.split("\n")) {
    const marker = /\s*(?:\/\/|#) (surface|auth|template):(-?)([a-z0-9]+)\s*$/.exec(line);
    if (marker) {
      const chosen = marker[1] === "auth" ? chosenAuth.has(marker[3]!) : marker[1] === "template" ? (values.template ?? "app") === marker[3] : values.surfaces.includes(marker[3]!);
      if (chosen === (marker[2] === "-")) continue;
      lines.push(line.slice(0, marker.index));
    } else lines.push(line);
  }
  const ident = values.title.replace(/[^A-Za-z0-9]/g, "");
  return lines.join("\n").replaceAll("__APP_NAME__", values.name).replaceAll("__APP_TITLE_IDENT__", /^[A-Za-z]/.test(ident) ? ident : `Plugin${ident}`).replaceAll("__APP_TITLE__", values.title);
}

/** The chosen methods plus the groups the templates mark: `social` (any provider), `flags` (any schema flag). */
function authMarkers(methods: readonly string[]): Set<string> {
  const markers = new Set(methods);
  if (methods.some((method) => method === "github" || method === "google")) markers.add("social");
  if (methods.some((method) => method === "passkeys" || method === "2fa")) markers.add("flags");
  return markers;
}

interface TrellisManifest {
  version: string;
  root: string;
  dependencies: Record<string, string>;
  devDependencies?: Record<string, string>;
}

function manifestFor(kind: "app" | "plugin", name: string, spec: string, surfaces: readonly Surface[], auth: readonly AuthMethod[], trellis: TrellisManifest) {
  const versionOf = (pkg: string) => trellis.devDependencies?.[pkg] ?? trellis.dependencies[pkg] ?? "*";
  const peers = [...new Set([...surfaces.flatMap((surface) => SURFACE_PEERS[surface]), ...auth.flatMap((method) => AUTH_PEERS[method])])].sort();
  const dependencies = Object.fromEntries([["trellis", spec], ["zod", versionOf("zod")], ...peers.map((pkg) => [pkg, versionOf(pkg)])]);
  const devDependencies = Object.fromEntries(DEV_TOOLS.map((pkg) => [pkg, versionOf(pkg)]));
  const allowScripts = installScripts(peers, spec);
  if (kind === "plugin") {
    return {
      name,
      version: "0.1.0",
      private: true,
      type: "module",
      main: "src/index.ts",
      scripts: { test: "vitest run", typecheck: "tsc --noEmit" },
      peerDependencies: { trellis: spec },
      devDependencies: { trellis: spec, zod: versionOf("zod"), ...devDependencies },
      allowScripts,
    };
  }
  return {
    name,
    version: "0.1.0",
    private: true,
    type: "module",
    // The module that exports the app: what `trellis migrate`, `routes`, `admin` and `doctor` load.
    main: "src/app.ts",
    engines: { node: ">=20.19" },
    scripts: { dev: "trellis dev", build: "trellis build", start: "trellis start", test: "vitest run", typecheck: "tsc --noEmit" },
    dependencies,
    devDependencies,
    allowScripts,
  };
}

/**
 * npm's `allowScripts` for what the project installs, so npm 11 does not warn on every install
 * about scripts nobody reviewed: esbuild's postinstall (under tsx and vitest) checks its binary;
 * swagger-ui-dist's @scarf/scarf only reports the install to its vendor, so it is denied. Trellis
 * from a git URL builds dist/ in its `prepare`, which the install needs; from a tarball it comes
 * built, and npm lists the `prepare` it never runs there unless the entry denies it.
 */
function installScripts(peers: readonly string[], spec: string): Record<string, boolean> {
  const trellis = /^(git\+|github:)/.test(spec) ? { [spec]: true } : /^file:.*\.(tgz|tar\.gz)$/.test(spec) ? { [spec]: false } : {};
  return { esbuild: true, ...(peers.includes("swagger-ui-dist") ? { "@scarf/scarf": false } : {}), ...trellis };
}

/**
 * Where the new project gets Trellis from when `--trellis` is not given: the tarball or folder
 * `npm exec --package=...` ran this command from (npm names it in `npm_config_package`), else the
 * version range.
 */
function inferredSpec(version: string, target: string): string {
  const from = process.env.npm_config_package?.split("\n")[0]?.trim();
  if (from && /\.(tgz|tar\.gz)$/.test(from)) return `file:${resolve(from)}`;
  if (from && /^(git\+|github:|https?:)/.test(from)) return from;
  void target;
  return `^${version}`;
}

/** Trellis's own package.json: beside dist/ once installed, at the repository root from source. */
function trellisManifest(): TrellisManifest {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dirname(dir) !== dir; dir = dirname(dir)) {
    const file = join(dir, "package.json");
    if (!existsSync(file)) continue;
    const manifest = JSON.parse(readFileSync(file, "utf8")) as TrellisManifest & { name?: string };
    if (manifest.name === "trellis") return { ...manifest, root: dir };
  }
  throw new CliError("CLI_BROKEN_INSTALL", "Trellis's package.json was not found beside the CLI.", "Reinstall trellis.");
}

/** The templates: shipped in dist/templates, read from presets/cli/templates in the repository. */
function templatesDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  // From source this file is presets/cli/commands/new.ts; bundled, it is inside dist/cli.js.
  for (const candidate of [join(here, "..", "templates"), join(here, "templates")]) if (existsSync(join(candidate, "app"))) return candidate;
  throw new CliError("CLI_BROKEN_INSTALL", "Trellis's project templates are missing.", "Reinstall trellis.");
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? listFiles(join(dir, entry.name)) : [join(dir, entry.name)]));
}

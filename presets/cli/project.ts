import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { CliError } from "./output.js";

export interface Project {
  root: string;
  manifest: { name?: string; main?: string; scripts?: Record<string, string>; dependencies?: Record<string, string>; devDependencies?: Record<string, string> };
}

const CONFIG_FILES = ["trellis.config.ts", "trellis.config.mts", "trellis.config.js", "trellis.config.mjs"];

/** The nearest folder at or above `cwd` holding a package.json, with its `.env` loaded (set variables win). */
export function findProject(cwd = process.cwd()): Project {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      const env = join(dir, ".env");
      if (existsSync(env)) loadEnv(env);
      return { root: dir, manifest: JSON.parse(readFileSync(file, "utf8")) as Project["manifest"] };
    }
    if (dirname(dir) === dir) throw new CliError("CLI_NO_PROJECT", `No package.json at or above ${cwd}.`, "Run the command inside a project, or create one with `trellis new <dir>`.");
  }
}

function loadEnv(file: string): void {
  const before = { ...process.env };
  process.loadEnvFile(file);
  Object.assign(process.env, before);
}

/** The module that exports the app: `trellis.config.*`, else `main` in package.json. */
export function entryOf(project: Project): string {
  const config = CONFIG_FILES.map((name) => join(project.root, name)).find((file) => existsSync(file));
  if (config) return config;
  if (project.manifest.main && existsSync(join(project.root, project.manifest.main))) return join(project.root, project.manifest.main);
  throw new CliError(
    "CLI_NO_ENTRY",
    "This project names no app module: there is no trellis.config.ts and package.json has no `main` that exists.",
    'Set "main" in package.json to the module that exports the app (`export default createApp`), or add trellis.config.ts.',
  );
}

/**
 * Imports a module of the project; TypeScript through the project's own tsx, registered for the
 * process (a command loads the project once). Trellis itself, and the stack under it, is imported
 * first, without the loader: the project's `import "trellis"` then finds every module already loaded
 * instead of sending each of better-auth's, zod's and Kysely's files through tsx's loader thread
 * (about a second of a command's two). tsx's namespaced import would load a second copy of it all.
 * The subpaths a new project's app imports beside `trellis` are loaded first too: together about
 * 50 ms of CPU here, against some 350 ms through the loader thread.
 */
export async function importModule(file: string, project: Project): Promise<Record<string, unknown>> {
  if (!/\.[mc]?ts$/.test(file)) return import(pathToFileURL(file).href);
  const api = tsxApi(project, `${file} is TypeScript and this project has no tsx to load it.`);
  // In Trellis's own repository (its example blog), tsconfig.json's paths send the app's `trellis`
  // imports to the source: the build loaded first would be a second copy nothing uses.
  if (project.manifest.name !== "trellis") await preloadTrellis();
  const { register } = (await import(pathToFileURL(api).href)) as { register(): () => void };
  register();
  return import(pathToFileURL(file).href);
}

async function preloadTrellis(): Promise<void> {
  await import("../trellis.js");
  await Promise.all([import("../../kernel/index.js"), import("../../kernel/embedded/index.js"), import("../../kernel/db/dialect/entry.js"), import("../../kernel/schema/index.js"), import("../../kernel/storage/index.js")]);
}

/** The ESM build of the project's tsx API, as its export map names it (require.resolve would pick the CommonJS one). */
export function tsxApi(project: Project, missing: string): string {
  try {
    const manifest = createRequire(join(project.root, "package.json")).resolve("tsx/package.json");
    const exported = (JSON.parse(readFileSync(manifest, "utf8")) as { exports: Record<string, { import: { default: string } }> }).exports["./esm/api"]!;
    return join(dirname(manifest), exported.import.default);
  } catch {
    throw new CliError("CLI_NO_TSX", missing, "npm install --save-dev tsx");
  }
}

/** What the CLI needs of an app: the same `App` a project builds. */
export interface LoadedApp {
  /** The options the App was made with: its database object and storage. */
  readonly options?: { db?: unknown; storage?: unknown };
  build(): any;
  start(): Promise<any>;
}

/** The project's app: the entry's default export (or `app`), an `App` or a function returning one. */
export async function loadApp(project: Project): Promise<LoadedApp> {
  // A command's stdout is its answer (a generated password, a table): the app's log lines go to stderr.
  process.env.TRELLIS_LOG_STREAM ??= "stderr";
  const entry = entryOf(project);
  const module = await importModule(entry, project);
  const exported = module.default ?? module.app ?? module.createApp;
  const app = typeof exported === "function" && !isApp(exported) ? await (exported as () => unknown)() : exported;
  if (!isApp(app)) {
    throw new CliError("CLI_NO_APP", `${entry} does not export an app.`, "Export the App, or a function returning it, as the default export: `export default createApp`.");
  }
  return app;
}

function isApp(value: unknown): value is LoadedApp {
  return typeof value === "object" && value !== null && typeof (value as LoadedApp).build === "function" && typeof (value as LoadedApp).start === "function";
}

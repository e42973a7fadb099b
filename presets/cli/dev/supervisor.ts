import { watch, type FSWatcher } from "node:fs";
import { register } from "node:module";
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { MessageChannel } from "node:worker_threads";
import { borrowEmbedded, hostEmbedded } from "../../../kernel/embedded/lend.js";
import type { EmbeddedDatabase } from "../../../kernel/embedded/embedded.js";
import { startupErrorText } from "../../startup-error.js";
import type { CommandTarget } from "../control/commands.js";
import type { ControlChannel } from "../control/server.js";
import { dim, say } from "../output.js";
import { tsxApi, type Project } from "../project.js";
import { superviseDev } from "./hook.js";

/** Changes closer together than this are one reload (an editor writes a file in several steps). */
const SETTLE_MS = 25;

/**
 * `trellis dev` in one process that outlives the code: the embedded database is opened once, by
 * the first app, and lent to every app after it (kernel/embedded/lend.ts); a change to a project
 * file closes the server `serve()` started and imports the server module again with a fresh
 * module graph for the project's files (loader.mjs), while Trellis, PGlite and the other packages
 * stay loaded. A module that fails to load or an app that fails to start is shown, and the next
 * change tries again. The control channel for the CLI stays open across reloads.
 */
export async function superviseServer(project: Project, server: string): Promise<number> {
  const api = tsxApi(project, "`trellis dev` runs TypeScript through tsx, which this project does not have.");
  // Trellis and the stack under it (better-auth, Kysely, zod, oRPC, the Node server) are loaded
  // before the hooks are registered, as `importModule` does for a command: the project's imports of
  // them then find them loaded, instead of every file of every package going through tsx's and
  // loader.mjs's hooks on their thread (most of a cold start's seconds). They stay loaded across
  // reloads either way.
  await Promise.all([import("../../trellis.js"), import("../../node.js")]);
  const { register: registerTsx } = (await import(pathToFileURL(api).href)) as { register(): unknown };
  registerTsx();
  const reported = new MessageChannel();
  register(loaderUrl(), { parentURL: import.meta.url, data: { root: pathToFileURL(`${project.root}/`).href, port: reported.port2 }, transferList: [reported.port2] });

  let current: CommandTarget & { running: { close(): Promise<void> } } | undefined;
  const databases = new Map<string, EmbeddedDatabase>();
  const channels: Promise<ControlChannel | undefined>[] = [];
  hostEmbedded((dataDir, open) => {
    let database = databases.get(dataDir);
    if (!database) {
      database = open();
      databases.set(dataDir, database);
      channels.push(
        import("../control/server.js")
          .then(({ openControl }) => openControl(dataDir, () => current))
          .catch((error: Error) => {
            process.stderr.write(`trellis dev: no control channel for ${dataDir} (${error.message}); CLI commands cannot reach this server\n`);
            return undefined;
          }),
      );
    }
    return borrowEmbedded(database);
  });
  superviseDev({
    served(running, app) {
      const options = (app as { options?: CommandTarget["options"] }).options;
      current = { built: running.app, options, running };
    },
  });
  // A promise the app left unawaited must not end the process that holds the database.
  process.on("unhandledRejection", (error) => process.stderr.write(startupErrorText(error)));

  const entry = pathToFileURL(join(project.root, server)).href;
  let generation = 0;
  const load = async () => {
    try {
      await import(`${entry}?trellis-dev=${++generation}`);
    } catch (error) {
      process.stderr.write(startupErrorText(error));
      say(dim("waiting for a change to reload"));
    }
  };

  // Reloads run one at a time; changes during one make one more.
  let reloading: Promise<void> | undefined;
  let again: string | undefined;
  const reload = (file: string) => {
    if (reloading) {
      again = file;
      return;
    }
    reloading = (async () => {
      say(dim(`${relative(project.root, file)} changed: reloading`));
      const previous = current;
      current = undefined;
      await previous?.running.close().catch((error: unknown) => process.stderr.write(startupErrorText(error)));
      await load();
    })().finally(() => {
      reloading = undefined;
      if (again) reload(again);
      again = undefined;
    });
  };
  const watcher = filesWatcher(reload);
  reported.port1.on("message", (url: string) => watcher.add(fileURLToPath(url)));
  reported.port1.unref();
  watcher.add(join(project.root, server));

  say(dim(`watching ${server} and what it imports`));
  await load();
  await new Promise((stop) => {
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  watcher.close();
  await reloading;
  await current?.running.close();
  for (const channel of channels) await (await channel)?.close();
  for (const database of databases.values()) await database.close();
  superviseDev(undefined);
  hostEmbedded(undefined);
  return 0;
}

/** Watches the folders of the files the app loaded; a change to one of those files (debounced) calls `changed`. */
function filesWatcher(changed: (file: string) => void) {
  const files = new Set<string>();
  const folders = new Map<string, FSWatcher>();
  let timer: NodeJS.Timeout | undefined;
  return {
    add(file: string) {
      if (files.has(file)) return;
      files.add(file);
      const folder = dirname(file);
      if (folders.has(folder)) return;
      const watcher = watch(folder, (_event, name) => {
        const touched = name && join(folder, basename(name));
        if (!touched || !files.has(touched)) return;
        clearTimeout(timer);
        timer = setTimeout(() => changed(touched), SETTLE_MS);
      });
      folders.set(folder, watcher);
    },
    close() {
      clearTimeout(timer);
      for (const watcher of folders.values()) watcher.close();
    },
  };
}

/** The module hooks beside this module: loader.mjs from source, dev-loader.mjs in the build. */
function loaderUrl(): URL {
  return import.meta.url.endsWith(".ts") ? new URL("./loader.mjs", import.meta.url) : new URL("./dev-loader.mjs", import.meta.url);
}

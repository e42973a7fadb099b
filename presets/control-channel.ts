import { App } from "./app.js";
import type { BuiltApp } from "./types.js";

type Servable = App<any, any, any> | BuiltApp<any, any>;

/** The control channel beside an embedded data directory (presets/cli/control), loaded only then. */
export async function openControlFor(app: Servable, built: BuiltApp<any, any>): Promise<{ close(): Promise<void> } | undefined> {
  const options = app instanceof App ? app.options : undefined;
  const dataDir = (options?.db as { dataDir?: string } | undefined)?.dataDir;
  if (!dataDir) return undefined;
  try {
    const { openControl } = await import("./cli/control/server.js");
    return await openControl(dataDir, () => ({ built, options }));
  } catch (error) {
    // The app serves without it: commands beside it refuse with EMBEDDED_DIR_LOCKED, as they did before.
    process.stderr.write(`trellis: no control channel for ${dataDir} (${(error as Error).message}); CLI commands cannot reach this server\n`);
    return undefined;
  }
}

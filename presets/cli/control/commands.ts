/**
 * The commands a running server runs for the CLI beside it, by name: each is the command's own
 * body, given the app being served instead of one the CLI would open (and fail to: the server
 * holds the data directory). Loaded only when a command arrives.
 */

/** The app a command runs on: the built app, and the options it was made with (its database object, storage). */
export interface CommandTarget {
  built: any;
  options?: { db?: unknown; storage?: unknown };
}

/** A command's exit code, or its code and a value handed back to the CLI (plain JSON). */
export type CommandResult = number | { code: number; value: unknown };

type Runner = (target: CommandTarget, args: never) => Promise<CommandResult>;

export const remoteCommands: Record<string, Runner> = {
  routes: async (target) => (await import("../commands/routes.js")).routesOn(target),
  "admin create": async (target, args) => (await import("../commands/admin.js")).adminCreateOn(target, args),
  "migrate status": async (target) => (await import("../commands/migrate.js")).statusOn(target),
  "migrate check": async (target) => (await import("../commands/migrate.js")).checkOn(target),
  "migrate up": async (target) => (await import("../commands/migrate.js")).upOn(target),
  doctor: async (target, args) => (await import("../commands/doctor.js")).databaseChecksOn(target, args),
  "db backup": async (target, args) => (await import("../commands/db-backup.js")).backupOn(target, args),
  "db shell": async (target, args) => (await import("../commands/db-shell-server.js")).shellOn(target, args),
};

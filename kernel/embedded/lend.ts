import { TrellisError } from "../errors.js";
import { PGliteDialect, type PGliteLike } from "../db/dialect/pglite.js";
import { reentrant } from "../db/dialect/reentrant.js";
import type { EmbeddedDatabase } from "./embedded.js";

/**
 * How a process that outlives the apps it loads hands them a database that is already open: the
 * dev supervisor keeps one instance across code reloads, and the CLI beside a running server gives
 * an app one that never opens. `embedded()` asks the host for every data directory (never for
 * `memory://`); the host answers with a database to use, or `undefined` to open as usual through
 * `open`. The host lives on `globalThis` under a registered symbol, so it reaches an app whose
 * copy of `trellis/embedded` was loaded apart from the host's.
 */
export type EmbeddedHost = (dataDir: string, open: () => EmbeddedDatabase) => EmbeddedDatabase | undefined;

const HOST = Symbol.for("trellis.embedded.host");

/** Installs (or, with `undefined`, removes) the host `embedded()` asks before opening a data directory. */
export function hostEmbedded(host: EmbeddedHost | undefined): void {
  (globalThis as { [HOST]?: EmbeddedHost })[HOST] = host;
}

/** The host installed by this process, if any. */
export function embeddedHost(): EmbeddedHost | undefined {
  return (globalThis as { [HOST]?: EmbeddedHost })[HOST];
}

/**
 * A view of an open database for one app: the same instance and live provider, its own dialect,
 * and a `close()` that leaves the instance open (the lender closes it). Closing the app that
 * borrowed it ends the app's queries and streams, not the database.
 */
export function borrowEmbedded<D extends EmbeddedDatabase>(database: D): D {
  const dialect = reentrant(
    new PGliteDialect({
      pglite: async () => {
        await database.ready();
        return database.client;
      },
      onDestroy: async () => {},
    }),
  );
  return { ...database, dialect, close: async () => {} };
}

/**
 * A database for an app that is only built, never served (`trellis routes`, or a command run
 * through a running server): it opens nothing and takes no lock, and a query on it fails naming why.
 */
export function unopenedEmbedded(dataDir: string, reason: string): EmbeddedDatabase {
  const refuse = () => Promise.reject(new TrellisError("EMBEDDED_NOT_OPENED", `The embedded database ${dataDir} is not opened here: ${reason}.`));
  const client: PGliteLike = { query: refuse, exec: refuse, transaction: refuse, close: async () => {}, closed: false } as unknown as PGliteLike;
  const dialect = reentrant(new PGliteDialect({ pglite: async () => client, onDestroy: async () => {} }));
  return {
    dialect,
    kind: "postgres",
    live: { kind: "pglite", client },
    client,
    thread: "main",
    dataDir,
    about: { engine: "embedded PostgreSQL (PGlite)", location: dataDir },
    ready: async () => {},
    backup: refuse,
    close: async () => {},
    probe: refuse,
  };
}

import { TrellisError } from "../errors.js";
import { PGliteDialect, type PGliteLike } from "../db/dialect/pglite.js";
import { reentrant } from "../db/dialect/reentrant.js";
import type { EmbeddedDatabase } from "./embedded.js";

import { hostEmbedded as setHost, type EmbeddedHost as Host } from "./host.js";

/** What a host answers `embedded()` with: a database to use, or `undefined` to open as usual through `open`. */
export type EmbeddedHost = Host<EmbeddedDatabase>;

/** Installs (or, with `undefined`, removes) the host `embedded()` asks before opening a data directory (host.ts). */
export const hostEmbedded: (host: EmbeddedHost | undefined) => void = setHost;

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

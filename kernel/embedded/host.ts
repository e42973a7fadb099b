// Apart from embedded.ts and lend.ts, so embedded() can ask the host without an import cycle.
/**
 * How a process that outlives the apps it loads hands them a database that is already open: the
 * dev supervisor keeps one instance across code reloads, and the CLI beside a running server gives
 * an app one that never opens. `embedded()` asks the host for every data directory (never for
 * `memory://`); the host answers with a database to use, or `undefined` to open as usual through
 * `open`. The host lives on `globalThis` under a registered symbol, so it reaches an app whose
 * copy of `trellis/embedded` was loaded apart from the host's.
 */
export type EmbeddedHost<D = any> = (dataDir: string, open: () => D) => D | undefined;

const HOST = Symbol.for("trellis.embedded.host");

/** Installs (or, with `undefined`, removes) the host `embedded()` asks before opening a data directory. */
export function hostEmbedded(host: EmbeddedHost | undefined): void {
  (globalThis as { [HOST]?: EmbeddedHost })[HOST] = host;
}

/** The host installed by this process, if any. */
export function embeddedHost(): EmbeddedHost | undefined {
  return (globalThis as { [HOST]?: EmbeddedHost })[HOST];
}


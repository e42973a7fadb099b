/**
 * What `serve()` (trellis/node) tells the `trellis dev` supervisor about the server it started, so the
 * supervisor can close it before the next reload. Found on `globalThis` under a registered symbol:
 * the project's copy of `trellis/node` may not be the module instance the supervisor loaded.
 */
export interface DevSupervisor {
  /** A server `serve()` started: the supervisor closes it on the next change. `app` is what was served. */
  served(running: { close(): Promise<void>; app: unknown }, app: unknown): void;
}

const SUPERVISOR = Symbol.for("trellis.dev.supervisor");

/** The supervisor of this process, when it runs under `trellis dev`. */
export function devSupervisor(): DevSupervisor | undefined {
  return (globalThis as { [SUPERVISOR]?: DevSupervisor })[SUPERVISOR];
}

export function superviseDev(supervisor: DevSupervisor | undefined): void {
  (globalThis as { [SUPERVISOR]?: DevSupervisor })[SUPERVISOR] = supervisor;
}

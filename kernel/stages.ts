/**
 * The stage ladder. Plugins run (validate, build, middleware) in stage order, ties broken by
 * registration order, so behaviour never depends on the order a user wrote `.auth()` or `.use()`.
 * Gaps of 100 leave room for a plugin to place itself between two stages.
 */
export const STAGES = Object.freeze({
  /** CORS, origin check, body limit, rate limit: they answer or reject before anyone else works. */
  edge: 100,
  /** Auth: it resolves who the caller is, which every feature below may read. */
  identity: 200,
  /** Resources, files, admin, live: their procedures exist before user plugins build (SPEC rule 7). */
  feature: 300,
  /** The default for `.use()`: user plugins see every built-in procedure. */
  user: 400,
  /** OpenAPI/REST and MCP: they read the sealed router, so they come after every procedure. */
  surface: 500,
  /** Health: it only observes. */
  observe: 600,
});

export type StageName = keyof typeof STAGES;

import { definePlugin } from "../../kernel/index.js";

export interface KeySessionOptions {
  /** Which ids are signed in (all of them when left out): revoking one is deleting it from the set. */
  accepts?: (id: string) => boolean;
  /** How long the lookup takes, read per request; the answer is decided before the wait, as a slow session store reads first and answers later. */
  lookupMs?: () => number;
}

/**
 * Sessions from `x-api-key: <user id>`: a signed-in caller per header, without sign-ups, for suites
 * that test what owner scope and rules do with a user rather than how the user signed in.
 */
export function keySessionsOf(options: KeySessionOptions = {}) {
  return definePlugin({
    name: "sessions",
    stage: "identity",
    provides: ["session"],
    build: (ctx) =>
      ctx.hooks.session.tap(async (event) => {
        const id = event.headers.get("x-api-key");
        const valid = id !== null && (options.accepts?.(id) ?? true);
        const wait = options.lookupMs?.() ?? 0;
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        return valid ? { user: { id, email: `${id}@x`, name: id }, session: { id, userId: id, expiresAt: new Date(8.64e15) } } : undefined;
      }),
  });
}

/** Every `x-api-key` is a signed-in user. */
export const keySessions = keySessionsOf();

import { definePlugin } from "../../kernel/index.js";

/**
 * Sessions from `x-api-key: <user id>`: a signed-in caller per header, without sign-ups, for suites
 * that test what owner scope and rules do with a user rather than how the user signed in.
 */
export const keySessions = definePlugin({
  name: "sessions",
  stage: "identity",
  provides: ["session"],
  build: (ctx) =>
    ctx.hooks.session.tap(async (event) => {
      const id = event.headers.get("x-api-key");
      return id ? { user: { id, email: `${id}@x`, name: id }, session: { id, userId: id, expiresAt: new Date(8.64e15) } } : undefined;
    }),
});

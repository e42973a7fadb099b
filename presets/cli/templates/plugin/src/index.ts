import { definePlugin, type AppPlugin } from "trellis/kernel";

export interface __APP_TITLE_IDENT__Options {
  /**
   * The greeting `greeting.hello` answers with.
   * @default "hello"
   */
  greeting?: string;
}

/**
 * __APP_TITLE__: an in-house Trellis plugin. It adds one procedure and one response header; add it
 * to an app with `.use(plugin())`. A plugin is a plain object: a unique `name`, a stage, and a
 * `build` that returns procedures, routes and HTTP middleware (docs/plugins.md has the whole API).
 */
export default function plugin(options: __APP_TITLE_IDENT__Options = {}): AppPlugin {
  const greeting = options.greeting ?? "hello";
  return definePlugin({
    name: "__APP_NAME__",
    build(ctx) {
      return {
        procedures: {
          "greeting.hello": ctx.base.handler(({ context }) => `${greeting} ${context.user?.name ?? "stranger"}`),
        },
        middleware: [
          async (event, next) => {
            event.setHeader("x-greeting", greeting);
            return next();
          },
        ],
      };
    },
  });
}

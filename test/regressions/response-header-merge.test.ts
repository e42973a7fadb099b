import { describe, expect, it } from "vitest";
import { App } from "../../presets/trellis.js";
import { closeAfterEach, request, sqliteMemory } from "../support/app.js";
import type { AppPlugin } from "../../kernel/index.js";

/**
 * Headers middleware puts on the event (`setHeader`, `appendHeader`) are merged into the handler's
 * response. They were written with `Headers.set`, one name at a time: CORS's `Vary: Origin` replaced
 * the `Vary` the route sent (a shared cache then served one encoding or language to every client),
 * and of several `Set-Cookie`s only the last survived, replacing the ones the handler set (the auth
 * library's session cookie among them).
 */
const build = closeAfterEach();
const origin = "https://app.example.com";

const cookies: AppPlugin = {
  name: "cookies",
  build: () => ({
    middleware: [
      (event, next) => {
        event.appendHeader("Set-Cookie", "a=1; Path=/");
        event.appendHeader("Set-Cookie", "b=2; Path=/");
        return next();
      },
    ],
  }),
};

describe("headers set by middleware on the event", () => {
  it("adds Origin to the Vary the route sent, keeping it", async () => {
    const app = build(
      new App({ db: sqliteMemory(), cors: { origins: [origin] } }).route("GET", "/page", () => new Response("hello", { headers: { vary: "Accept-Encoding" } })),
    );
    const { status, body, headers } = await request(app, "GET", "/page", { headers: { origin } });
    expect(status).toBe(200);
    expect(body).toBe("hello");
    expect(headers.get("vary")).toBe("Accept-Encoding, Origin");
    expect(headers.get("access-control-allow-origin")).toBe(origin);
  });

  it("sends every Set-Cookie, the route's and the middleware's", async () => {
    const app = build(
      new App({ db: sqliteMemory() }).use(cookies).route("GET", "/login", () => {
        const response = new Response("in");
        response.headers.append("set-cookie", "session=xyz; Path=/; HttpOnly");
        return response;
      }),
    );
    const { status, headers } = await request(app, "GET", "/login");
    expect(status).toBe(200);
    expect(headers.getSetCookie()).toEqual(["session=xyz; Path=/; HttpOnly", "a=1; Path=/", "b=2; Path=/"]);
  });

  it("keeps both middleware cookies on an immutable response (a redirect)", async () => {
    const app = build(new App({ db: sqliteMemory() }).use(cookies).route("GET", "/go", () => Response.redirect("https://example.com/next", 302)));
    const { status, headers } = await request(app, "GET", "/go");
    expect(status).toBe(302);
    expect(headers.get("location")).toBe("https://example.com/next");
    expect(headers.getSetCookie()).toEqual(["a=1; Path=/", "b=2; Path=/"]);
  });
});

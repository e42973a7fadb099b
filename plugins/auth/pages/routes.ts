import type { RouteDefinition } from "../../../kernel/index.js";
import type { SignInMethods } from "./methods.js";
import type { PagesSettings } from "./options.js";
import { PAGES_SCRIPT } from "./script.js";
import { PAGES_STYLE } from "./style.js";
import { errorPage, landingPage, resetPasswordPage, signInPage, twoFactorPage } from "./views.js";

/**
 * The pages' routes. They read no session (`context: false`): each page is the same for everyone,
 * and what it does happens in the browser against `/api/auth/**`. An app's own `.route()` on the
 * same path wins (user routes come first), so any page can be replaced.
 */
export function pageRoutes(settings: PagesSettings, methods: () => Promise<SignInMethods>): RouteDefinition[] {
  const at = (path: string, render: (url: URL) => Response | Promise<Response>): RouteDefinition => ({
    method: "GET",
    path: `${settings.path}${path}`,
    context: false,
    handler: (event) => render(event.url),
  });
  return [
    at("/sign-in", async (url) => signInPage(settings, await methods(), url)),
    at("/two-factor", (url) => twoFactorPage(settings, url)),
    at("/reset-password", (url) => resetPasswordPage(settings, url)),
    at("/verified", (url) => landingPage(settings, url, "Email verified", "Your email address is verified.")),
    at("/signed-in", (url) => landingPage(settings, url, "Signed in", "You are signed in.")),
    at("/error", (url) => errorPage(settings, url)),
    at("/pages.js", () => asset(PAGES_SCRIPT, "text/javascript; charset=utf-8")),
    at("/pages.css", () => asset(PAGES_STYLE, "text/css; charset=utf-8")),
  ];
}

function asset(body: string, type: string): Response {
  return new Response(body, { headers: { "content-type": type, "cache-control": "public, max-age=300", "x-content-type-options": "nosniff" } });
}

import { RpcError, errorResponse, type RouteDefinition } from "../../kernel/index.js";
import { dashboardAssets, type DashboardAsset } from "./assets.js";

/**
 * Strict: the page runs only its own bundled script and stylesheet, talks only to its own origin,
 * and cannot be framed. No inline script or style anywhere.
 */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS = {
  "content-security-policy": CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
};

/**
 * `GET <path>`: the page; `GET <path>/assets/<name>`: its hashed, immutable script and stylesheet.
 * `signIn`, the auth pages' sign-in page when the app serves it, is offered beside the password form
 * for the other methods (providers, passkeys), coming back to the dashboard.
 */
export function dashboardRoutes(path: string, signIn?: string): RouteDefinition[] {
  const other = signIn ? ` data-sign-in="${signIn}?callbackURL=${encodeURIComponent(path)}"` : "";
  const page: RouteDefinition["handler"] = async () => {
    const { script, style } = await dashboardAssets();
    const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>Admin</title>
<link rel="stylesheet" href="${path}/assets/${style.name}">
<script type="module" src="${path}/assets/${script.name}"></script>
</head>
<body${other}><div id="app"></div><noscript>The admin dashboard needs JavaScript.</noscript></body>
</html>
`;
    return new Response(html, { headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-cache", ...SECURITY_HEADERS } });
  };
  const asset: RouteDefinition["handler"] = async (event) => {
    const { script, style } = await dashboardAssets();
    const found = [script, style].find((file: DashboardAsset) => file.name === event.params.name);
    if (!found) return errorResponse(new RpcError("NOT_FOUND", { message: "No such dashboard asset" }), false);
    return new Response(found.body as BodyInit, {
      headers: { "content-type": found.type, "cache-control": "public, max-age=31536000, immutable", ...SECURITY_HEADERS },
    });
  };
  // The page and its files need no session: the page signs in through the auth endpoints itself.
  return [
    { method: "GET", path, handler: page, context: false },
    { method: "GET", path: `${path}/`, handler: page, context: false },
    { method: "GET", path: `${path}/assets/:name`, handler: asset, context: false },
  ];
}

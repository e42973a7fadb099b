import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { escapeHtml, type RouteDefinition } from "../../kernel/index.js";

export const DOCS_PACKAGE = "swagger-ui-dist";

/**
 * Only files from the package itself and our own: no CDN, no inline script. Never framed: the page
 * signs users in and sends their requests, so another site must not overlay it (clickjacking).
 */
const CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'";

const ASSETS: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
};

/**
 * The reference page at `path` (`/docs`): Swagger UI from the `swagger-ui-dist` package, served by
 * the app, rendering `/openapi.json`. The start-up script is a file too, so the page runs under a CSP
 * with no inline script.
 */
export function docsRoutes(path: string, documentPath: string, title: string): RouteDefinition[] {
  const base = path.replace(/\/$/, "");
  const directory = () => dirname(createRequire(import.meta.url).resolve(`${DOCS_PACKAGE}/package.json`));
  const cache = new Map<string, Promise<Buffer>>();
  const asset = (name: string) => {
    let bytes = cache.get(name);
    if (!bytes) cache.set(name, (bytes = readFile(join(directory(), name))));
    return bytes;
  };
  const headers = (type: string) => ({
    "content-type": type,
    "content-security-policy": CSP,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "cache-control": "public, max-age=3600",
  });
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)} API reference</title>
<link rel="stylesheet" href="${base}/swagger-ui.css"></head>
<body><main id="reference"></main>
<script src="${base}/swagger-ui-bundle.js"></script>
<script src="${base}/init.js"></script>
</body>
</html>`;
  const init = `window.ui = SwaggerUIBundle({ url: ${JSON.stringify(documentPath)}, dom_id: "#reference", deepLinking: true, withCredentials: true });`;
  return [
    { method: "GET", path: base || "/", context: false, handler: () => new Response(html, { headers: headers("text/html; charset=utf-8") }) },
    { method: "GET", path: `${base}/init.js`, context: false, handler: () => new Response(init, { headers: headers("text/javascript; charset=utf-8") }) },
    ...Object.entries(ASSETS).map(([name, type]): RouteDefinition => ({
      method: "GET",
      path: `${base}/${name}`,
      context: false,
      handler: async () => new Response(new Uint8Array(await asset(name)), { headers: headers(type) }),
    })),
  ];
}

import { escapeHtml } from "../../../kernel/index.js";
import type { PagesSettings } from "./options.js";



/**
 * No inline script or style, no third party: the pages' script and stylesheet are files under the
 * pages' own path, so the policy allows only 'self', and forms post nowhere but the app.
 */
export const PAGES_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";


/** A whole page: `body` is trusted markup built by the pages themselves (every value escaped). */
export function page(settings: PagesSettings, title: string, body: string, status = 200): Response {
  const theme = settings.stylesheet ? `\n<link rel="stylesheet" href="${escapeHtml(settings.stylesheet)}">` : "";
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="${settings.path}/pages.css">${theme}
<script src="${settings.path}/pages.js" defer></script>
</head>
<body>
<main data-pages="${settings.path}">
<h1>${escapeHtml(title)}</h1>
${body}
<p role="status" aria-live="polite" data-status></p>
</main>
</body>
</html>
`;
  return new Response(html, {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": PAGES_CSP,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
    },
  });
}

/**
 * Where a page sends the browser next: a path on this app only (`/x`, never `//host` or `/\host`),
 * so a crafted link cannot turn the sign-in page into an open redirect.
 */
export function localPath(value: string | null, fallback = "/"): string {
  if (!value || !value.startsWith("/") || value.startsWith("//") || value.startsWith("/\\")) return fallback;
  try {
    const url = new URL(value, "http://local.invalid");
    return url.origin === "http://local.invalid" ? `${url.pathname}${url.search}${url.hash}` : fallback;
  } catch {
    return fallback;
  }
}

import { isLoopbackHost } from "../../kernel/index.js";

/**
 * Outside production, the loopback address a request reached (`http://localhost:4100` when the app
 * is served on port 4100) is its own origin: a page served there may use the auth routes whatever
 * `baseUrl` says, so a changed `PORT` does not break sign-up in development. Only a loopback host
 * counts (a rebound DNS name reaching the same socket keeps its foreign name), and only the address
 * the request reached, never another port.
 */
export function servedLoopbackOrigin(request: Request | undefined): string[] {
  if (!request) return [];
  try {
    const url = new URL(request.url);
    return isLoopbackHost(url.hostname) ? [url.origin] : [];
  } catch {
    return [];
  }
}

/**
 * The auth library's `403 INVALID_ORIGIN` says only "Invalid origin". The same answer, with a
 * message that names the refused origin, the origin the app trusts and the setting that fixes it.
 */
export async function explainedOriginRefusal(response: Response, request: Request, baseUrl: unknown): Promise<Response> {
  if (response.status !== 403 || !response.headers.get("content-type")?.includes("json")) return response;
  const body = (await response.clone().json().catch(() => undefined)) as { code?: string; message?: string } | undefined;
  if (body?.code !== "INVALID_ORIGIN") return response;
  const origin = request.headers.get("origin") ?? request.headers.get("referer") ?? "(none)";
  const trusted = typeof baseUrl === "string" ? `the app's baseUrl is ${baseUrl}` : "the app's baseUrl does not name it";
  const message =
    `Origin ${origin} is not trusted by the auth routes: ${trusted}. Set baseUrl to the address users reach the app at ` +
    `(APP_BASE_URL in a project made by trellis new), or list the origin in cors.origins or the auth option trustedOrigins.`;
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  return new Response(JSON.stringify({ ...body, message }), { status: 403, statusText: response.statusText, headers });
}

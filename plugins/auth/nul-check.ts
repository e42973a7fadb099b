import { RpcError, type RequestEvent } from "../../kernel/index.js";

/**
 * PostgreSQL refuses a NUL character in text, and the auth library turns that refusal into a bare
 * 500. So a JSON body sent to `/api/auth/**` is looked at first: a NUL in any string (a name, an
 * image URL, an API key's name) is the caller's mistake, a 400 that names the field. A body that is
 * not JSON is left to the library, which answers it itself.
 */
export async function assertNoNul(event: RequestEvent): Promise<void> {
  const { request } = event;
  if (request.body === null || !(request.headers.get("content-type") ?? "").includes("json")) return;
  const text = await request.clone().text();
  // Both the raw character and its JSON escape; a body without either needs no parse.
  if (!text.includes("\u0000") && !/\\u0000/i.test(text)) return;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return;
  }
  const path = nulPath(parsed, []);
  if (path) throw new RpcError("BAD_REQUEST", { message: `Invalid input: ${path.join(".") || "body"}: must not contain a NUL character (\\u0000)` });
}

/** Deeper than any auth endpoint's input: past it the library's own validation answers. */
const MAX_DEPTH = 32;

/** The path of the first string (or key) holding a NUL, depth-first. */
function nulPath(value: unknown, path: string[]): string[] | undefined {
  if (typeof value === "string") return value.includes("\u0000") ? path : undefined;
  if (typeof value !== "object" || value === null || path.length > MAX_DEPTH) return undefined;
  for (const [key, child] of Object.entries(value)) {
    if (key.includes("\u0000")) return [...path, key.replaceAll("\u0000", "\\u0000")];
    const found = nulPath(child, [...path, key]);
    if (found) return found;
  }
  return undefined;
}

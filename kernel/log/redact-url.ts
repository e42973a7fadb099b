/**
 * One redaction of request URLs for everything that records them (the request's log line, the
 * server span's `url.path` and `url.query`; metrics label by route template and never see one):
 * reset, verification and sign-in tokens travel in URLs and stay valid until used.
 */

/** A path segment after one of these is a token (better-auth's `GET /reset-password/:token`). */
const TOKEN_AFTER: readonly string[] = ["reset-password"];

/** Query parameters whose value is a credential, by name (case-insensitive). */
const SECRET_PARAMS: ReadonlySet<string> = new Set(["token", "code", "otp", "secret", "password", "key", "signature", "sig", "access_token", "refresh_token", "id_token", "x-amz-signature", "x-amz-credential", "x-amz-security-token"]);

export const REDACTED_URL_PART = "[redacted]";

/** The path with every token segment replaced: `/api/auth/reset-password/[redacted]`. */
export function redactPath(path: string): string {
  if (!TOKEN_AFTER.some((marker) => path.includes(`/${marker}/`))) return path;
  const segments = path.split("/");
  for (let i = 1; i < segments.length; i++) {
    if (segments[i] !== "" && TOKEN_AFTER.includes(segments[i - 1]!)) segments[i] = REDACTED_URL_PART;
  }
  return segments.join("/");
}

/**
 * A query string (without its `?`) with secret parameters' values replaced, and URLs carried in
 * other parameters (`callbackURL=/new-password?token=...`) redacted the same way.
 */
export function redactQuery(query: string): string {
  if (query === "") return query;
  return query
    .split("&")
    .map((pair) => {
      const equals = pair.indexOf("=");
      if (equals === -1) return pair;
      const name = pair.slice(0, equals);
      const value = pair.slice(equals + 1);
      if (SECRET_PARAMS.has(safeDecode(name).toLowerCase())) return `${name}=${REDACTED_URL_PART}`;
      const decoded = safeDecode(value.replaceAll("+", " "));
      if (!decoded.includes("?") && !decoded.includes("/")) return pair;
      const redacted = redactTarget(decoded);
      return redacted === decoded ? pair : `${name}=${encodeURIComponent(redacted)}`;
    })
    .join("&");
}

/** A path with an optional query (a URL's path and search, or a whole URL), redacted. */
function redactTarget(target: string): string {
  const mark = target.indexOf("?");
  if (mark === -1) return redactPath(target);
  return `${redactPath(target.slice(0, mark))}?${redactQuery(target.slice(mark + 1))}`;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The redacted query of an absolute URL, or undefined when it has none. */
export function redactedQueryOf(url: string): string | undefined {
  const mark = url.indexOf("?");
  if (mark === -1) return undefined;
  const hash = url.indexOf("#", mark);
  const query = url.slice(mark + 1, hash === -1 ? undefined : hash);
  return query === "" ? undefined : redactQuery(query);
}

/**
 * `headers` (what middleware set on the event) onto the response, copied first when its headers are
 * immutable (a response Trellis did not build). Each name replaces the response's own, except the
 * two that list: every `Set-Cookie` is kept (a cookie per header line), and `Vary` gains the names
 * it lacks (CORS's `Origin` beside the route's `Accept-Encoding`).
 */
export function withHeaders(response: Response, headers: Headers): Response {
  let copied = false;
  headers.forEach((value, name) => {
    if (!copied) {
      try {
        merge(response.headers, name, value);
        return;
      } catch {
        response = new Response(response.body, response);
        copied = true;
      }
    }
    merge(response.headers, name, value);
  });
  return response;
}

function merge(target: Headers, name: string, value: string): void {
  if (name === "set-cookie") return target.append(name, value);
  if (name !== "vary") return target.set(name, value);
  const present = target.get("vary");
  if (present === null) return target.set(name, value);
  const listed = new Set(present.split(",").map((item) => item.trim().toLowerCase()));
  const missing = value.split(",").map((item) => item.trim()).filter((item) => item && !listed.has(item.toLowerCase()));
  if (missing.length > 0) target.set(name, [present, ...missing].join(", "));
}

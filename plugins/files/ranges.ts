/** Conditional and partial requests for the download route (RFC 9110, sections 13 and 14). */

/** True when `If-None-Match` lists `etag` (weak comparison) or is `*`. */
export function matchesEtag(header: string | null, etag: string): boolean {
  if (!header) return false;
  const bare = etag.replace(/^W\//, "");
  return header.split(",").some((candidate) => {
    const tag = candidate.trim();
    return tag === "*" || tag.replace(/^W\//, "") === bare;
  });
}

export type ByteRange = { start: number; end: number };

/**
 * One byte range of `size` bytes, `"unsatisfiable"` (416), or undefined to send the whole body: no
 * header, an `If-Range` that no longer matches, a malformed header, or several ranges (allowed by
 * RFC 9110: a server may ignore Range).
 */
export function requestedRange(header: string | null, ifRange: string | null, etag: string, size: number): ByteRange | "unsatisfiable" | undefined {
  if (!header) return undefined;
  if (ifRange !== null && ifRange.trim() !== etag) return undefined;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === "" && match[2] === "")) return undefined;
  if (match[1] === "") {
    const suffix = Number(match[2]);
    if (suffix === 0 || size === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const last = match[2] === "" ? size - 1 : Number(match[2]);
  if (match[2] !== "" && last < start) return undefined;
  if (start >= size) return "unsatisfiable";
  return { start, end: Math.min(last, size - 1) };
}

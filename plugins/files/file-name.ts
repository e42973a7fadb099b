/**
 * File names are metadata only (the storage key is generated), but they travel to databases and
 * response headers: control characters and NUL are removed, a client-side path is cut to its last
 * segment, and the length is bounded.
 */
export function cleanName(raw: string): string {
  const wellFormed = raw.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");
  // eslint-disable-next-line no-control-regex
  const printable = wellFormed.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, "");
  const base = printable.split(/[/\\]/).pop()!.trim();
  const name = base === "." || base === ".." ? "" : base;
  return [...name].slice(0, 255).join("") || "file";
}

/**
 * RFC 6266: an ASCII fallback in `filename` (quotes, backslashes, percent signs and non-ASCII
 * replaced) and the exact name in `filename*` (RFC 8187, UTF-8, percent-encoded).
 */
export function contentDisposition(kind: "inline" | "attachment", name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\%]/g, "_");
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

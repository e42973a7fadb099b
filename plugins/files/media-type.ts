/** Media types: what is stored for an upload, what `accept` admits, and what may render inline. */

const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const MEDIA_TYPE = new RegExp(`^${TOKEN}/${TOKEN}(\\s*;\\s*${TOKEN}=(${TOKEN}|"[^"\\\\\\u0000-\\u001f\\u007f]*"))*$`);
export const OCTET_STREAM = "application/octet-stream";

/**
 * The type to store: the client's, with its essence lower-cased and its parameters kept, or
 * `application/octet-stream` when it is missing or not a valid media type (it becomes a response
 * header later, so nothing else may pass).
 */
export function storedType(declared: string): string {
  const type = declared.trim();
  if (!type || type.length > 255 || !MEDIA_TYPE.test(type)) return OCTET_STREAM;
  const semicolon = type.indexOf(";");
  return semicolon === -1 ? type.toLowerCase() : type.slice(0, semicolon).toLowerCase() + type.slice(semicolon);
}

/** `type/subtype`, lower-cased, without parameters. */
export function essenceOf(type: string): string {
  return type.split(";", 1)[0]!.trim().toLowerCase();
}

/** Whether `type` matches one of the patterns (`image/png`, `image/*`, `*\/*`), parameters ignored. */
export function accepts(patterns: readonly string[], type: string): boolean {
  const [main, sub] = essenceOf(type).split("/");
  return patterns.some((pattern) => {
    const essence = essenceOf(pattern);
    if (essence === "*/*" || essence === "*") return true;
    const [patternMain, patternSub] = essence.split("/");
    return patternMain === main && (patternSub === "*" || patternSub === sub);
  });
}

/** Raster image types a browser only ever draws as a picture. SVG is not one (it runs scripts). */
const INLINE_IMAGES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif"]);

/**
 * Whether a download may be served `inline`: an allowlist of types a browser renders as media or
 * plain text (raster images, audio, video, `text/plain`). Everything else, unknown types included
 * (`text/xsl`, `application/xml`, `text/html`), is sent as an attachment.
 */
export function rendersInline(type: string): boolean {
  const essence = essenceOf(type);
  if (essence === "text/plain" || INLINE_IMAGES.has(essence)) return true;
  const [main, sub] = essence.split("/");
  return (main === "audio" || main === "video") && !!sub && !sub.endsWith("+xml");
}

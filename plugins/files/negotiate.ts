import type { ImageFormat } from "./image-options.js";

export const FORMAT_TYPES: Record<ImageFormat, string> = {
  avif: "image/avif",
  webp: "image/webp",
  jpeg: "image/jpeg",
  png: "image/png",
  gif: "image/gif",
};

/**
 * The format to send: the first of `offered` that `Accept` lists explicitly with a non-zero quality
 * (a bare `*\/*` or `image/*` does not count: older browsers send those and draw neither), else
 * `fallback`, which every browser draws.
 */
export function negotiateFormat(accept: string | null, offered: readonly ("avif" | "webp")[], fallback: ImageFormat): ImageFormat {
  if (!accept || offered.length === 0) return fallback;
  const listed = new Set<string>();
  for (const entry of accept.toLowerCase().split(",")) {
    const [type, ...params] = entry.split(";").map((part) => part.trim());
    const q = params.find((param) => param.startsWith("q="));
    if (type && !(q && Number(q.slice(2)) === 0)) listed.add(type);
  }
  return offered.find((format) => listed.has(FORMAT_TYPES[format])) ?? fallback;
}

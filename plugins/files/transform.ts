import type { Sharp, SharpOptions } from "sharp";
import { RpcError, importPeer } from "../../kernel/index.js";
import { FILES_IMAGE_TOO_LARGE, FILES_IMAGE_UNREADABLE, FILES_SVG_REFUSED } from "./errors.js";
import { essenceOf } from "./media-type.js";
import type { ImageFormat, ResolvedImages, VariantFit } from "./image-options.js";

type SharpFactory = (input: Uint8Array, options?: SharpOptions) => Sharp;

let loading: Promise<SharpFactory> | undefined;

/** sharp, loaded on first use (an optional peer: only apps with `images` need it). */
export function loadSharp(): Promise<SharpFactory> {
  return (loading ??= importPeer<{ default: SharpFactory }>("sharp", ".files({ images })").then((module) => module.default));
}

/** Types sharp reads; SVG only when `images.svg` allows it. */
const RASTER = new Set(["image/jpeg", "image/png", "image/webp", "image/gif", "image/avif", "image/tiff", "image/heic", "image/heif"]);
const SVG = "image/svg+xml";

/** Whether variants (and a placeholder) can be made from a file of this stored type. */
export function isTransformable(type: string, images: Pick<ResolvedImages, "svg">): boolean {
  const essence = essenceOf(type);
  return RASTER.has(essence) || (images.svg && essence === SVG);
}

export interface ImageInfo {
  /** Frames to read: 1 for a still image. */
  frames: number;
  hasAlpha: boolean;
}

/**
 * The image's header, read without decoding a pixel: refused with 415 when it is not an image
 * (or an SVG that may not be rasterised), 422 when it is unreadable or larger than `maxInputPixels`
 * (a decompression bomb declares its size before its first byte of pixels).
 */
export async function inspect(sharp: SharpFactory, bytes: Uint8Array, images: ResolvedImages): Promise<ImageInfo> {
  let meta: Awaited<ReturnType<Sharp["metadata"]>>;
  try {
    meta = await sharp(bytes, { limitInputPixels: false }).metadata();
  } catch {
    throw new RpcError(FILES_IMAGE_UNREADABLE, { status: 422, message: "The file is not a readable image" });
  }
  if (meta.format === "svg" && !images.svg) throw svgRefused();
  const frames = Math.min(meta.pages ?? 1, images.maxFrames);
  const width = meta.width ?? 0;
  const height = meta.pageHeight ?? meta.height ?? 0;
  const pixels = width * height * frames;
  if (pixels > images.maxInputPixels) {
    throw new RpcError(FILES_IMAGE_TOO_LARGE, {
      status: 422,
      message: `The image is ${width} x ${height}${frames > 1 ? ` x ${frames} frames` : ""}, more than the ${images.maxInputPixels} pixels images are allowed`
    });
  }
  return { frames, hasAlpha: meta.hasAlpha === true };
}

/**
 * What the header read would answer, when the first bytes already tell it: a JPEG is one frame and
 * has no alpha channel. Its pixel limit is then sharp's own `limitInputPixels`, checked on the
 * transform's header before any decoding; `transform` reports a refusal as `inspect` would.
 * Undefined for every other format, which `inspect` reads.
 */
export function infoFromSignature(bytes: Uint8Array): ImageInfo | undefined {
  return bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff ? { frames: 1, hasAlpha: false } : undefined;
}

export function svgRefused(): RpcError<any, any> {
  return new RpcError(FILES_SVG_REFUSED, { status: 415, message: "SVG images are not rasterised into variants (they can carry scripts); allow it with .files({ images: { svg: true } })" });
}

/** What every browser draws when it names no modern format: GIF for animations, PNG with transparency, else JPEG. */
export function fallbackFormat(info: ImageInfo): ImageFormat {
  return info.frames > 1 ? "gif" : info.hasAlpha ? "png" : "jpeg";
}

export interface Resize {
  width?: number;
  height?: number;
  fit: VariantFit;
  quality?: number;
}

/**
 * One variant: oriented from its EXIF, resized (never enlarged), encoded as `format`; metadata (EXIF
 * with GPS, XMP, comments) is not copied. sharp works on its own threads, off the event loop.
 */
export async function transform(sharp: SharpFactory, bytes: Uint8Array, info: ImageInfo, resize: Resize, format: ImageFormat, images: ResolvedImages): Promise<Uint8Array> {
  // Only formats that animate keep every frame; the others take the first.
  const animated = info.frames > 1 && (format === "webp" || format === "gif");
  const image = sharp(bytes, { limitInputPixels: images.maxInputPixels, ...(animated ? { pages: info.frames } : {}) })
    .autoOrient()
    .resize({ width: resize.width, height: resize.height, fit: resize.fit, withoutEnlargement: true });
  const quality = resize.quality ?? (format === "avif" ? 55 : 80);
  const encoded =
    format === "avif" ? image.avif({ quality, effort: 2 })
    : format === "webp" ? image.webp({ quality })
    : format === "jpeg" ? image.jpeg({ quality, mozjpeg: false })
    : format === "png" ? image.png()
    : image.gif();
  try {
    return await encoded.toBuffer();
  } catch {
    // An image `inspect` has not read (see `infoFromSignature`) gets its header's own answer: too
    // large, or unreadable.
    await inspect(sharp, bytes, images);
    // A header that parsed over pixels that do not (a truncated or corrupt file): the file's fault, not the server's.
    throw new RpcError(FILES_IMAGE_UNREADABLE, { status: 422, message: "The image could not be decoded: the file is truncated or corrupt" });
  }
}

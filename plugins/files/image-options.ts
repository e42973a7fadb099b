/** The `images` option of `.files()`: named variants and the bounds on the work they take. */

export type VariantFit = "cover" | "contain" | "fill" | "inside" | "outside";
export const VARIANT_FITS: readonly VariantFit[] = ["cover", "contain", "fill", "inside", "outside"];

export interface VariantSpec {
  /** Target width in pixels; with only one side given, the other follows the aspect ratio. */
  width?: number;
  /** Target height in pixels. */
  height?: number;
  /**
   * How the image fits both sides when both are given (sharp's `fit`).
   * @default "inside" (never cropped)
   */
  fit?: VariantFit;
  /**
   * Encoder quality, 1 to 100, for JPEG, WebP and AVIF.
   * @default 80 (AVIF 55)
   */
  quality?: number;
}

export type ImageFormat = "avif" | "webp" | "jpeg" | "png" | "gif";

export interface ImagesConfig {
  /** Named variants, served as `GET /files/<id>?variant=<name>` and made on first request. */
  variants?: Record<string, VariantSpec>;
  /**
   * Modern formats offered when the request's `Accept` lists them, in this order of preference;
   * otherwise JPEG (PNG for images with transparency, GIF for animations).
   * @default ["avif", "webp"]
   */
  formats?: Array<"avif" | "webp">;
  /**
   * Largest input, in pixels (width x height x frames), read from the header before anything is
   * decoded: larger images are refused with 422.
   * @default 100000000 (100 megapixels)
   */
  maxInputPixels?: number;
  /**
   * Most frames of an animated image that are transformed; the rest are dropped.
   * @default 100
   */
  maxFrames?: number;
  /**
   * Whether SVG files may be rasterised into variants. SVG is code (scripts, external references);
   * off, a variant of an SVG is 415.
   * @default false
   */
  svg?: boolean;
  /**
   * Transforms running at once; more wait in a queue of `queue`, and beyond that get 503 with
   * `Retry-After`.
   * @default 2
   */
  concurrency?: number;
  /** @default 32 */
  queue?: number;
  /**
   * Largest side of an ad-hoc size (`?w=&h=`), which only a signed URL may ask for.
   * @default 4096
   */
  maxSize?: number;
  /**
   * A thumbhash placeholder computed at upload for images, stored in `file.placeholder`, which the
   * schema adds with `.files({ placeholder: true })`.
   * @default true when the column exists
   */
  placeholder?: boolean;
}

export interface ResolvedImages {
  variants: Readonly<Record<string, Required<Pick<VariantSpec, "fit">> & VariantSpec>>;
  formats: readonly ("avif" | "webp")[];
  maxInputPixels: number;
  maxFrames: number;
  svg: boolean;
  concurrency: number;
  queue: number;
  maxSize: number;
  placeholder: boolean | undefined;
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

export function resolveImages(config: ImagesConfig = {}): ResolvedImages {
  const variants: ResolvedImages["variants"] = Object.fromEntries(Object.entries(config.variants ?? {}).map(([name, spec]) => [name, { fit: "inside", ...spec }]));
  return {
    variants,
    formats: config.formats ?? ["avif", "webp"],
    maxInputPixels: config.maxInputPixels ?? 100_000_000,
    maxFrames: config.maxFrames ?? 100,
    svg: config.svg ?? false,
    concurrency: config.concurrency ?? 2,
    queue: config.queue ?? 32,
    maxSize: config.maxSize ?? 4096,
    placeholder: config.placeholder,
  };
}

/** Every problem with `images`, as messages for the build-time error. */
export function imagesProblems(images: ResolvedImages): string[] {
  const problems: string[] = [];
  const positive = (value: unknown) => Number.isSafeInteger(value) && (value as number) > 0;
  for (const [name, spec] of Object.entries(images.variants)) {
    const where = `.files() images.variants.${name}`;
    if (!NAME.test(name)) problems.push(`${where}: a variant name is 1 to 64 letters, digits, "_" or "-"`);
    if (spec.width === undefined && spec.height === undefined) problems.push(`${where} needs a width, a height or both`);
    for (const side of ["width", "height"] as const) {
      if (spec[side] !== undefined && (!positive(spec[side]) || spec[side]! > images.maxSize)) problems.push(`${where}.${side} must be an integer from 1 to ${images.maxSize} (got ${spec[side]})`);
    }
    if (!VARIANT_FITS.includes(spec.fit)) problems.push(`${where}.fit must be one of ${VARIANT_FITS.join(", ")} (got ${JSON.stringify(spec.fit)})`);
    if (spec.quality !== undefined && (!Number.isInteger(spec.quality) || spec.quality < 1 || spec.quality > 100)) problems.push(`${where}.quality must be an integer from 1 to 100 (got ${spec.quality})`);
  }
  for (const format of images.formats) if (format !== "avif" && format !== "webp") problems.push(`.files() images.formats takes "avif" and "webp" (got ${JSON.stringify(format)})`);
  for (const key of ["maxInputPixels", "maxFrames", "concurrency", "maxSize"] as const) {
    if (!positive(images[key])) problems.push(`.files() images.${key} must be a positive integer (got ${images[key]})`);
  }
  if (!Number.isSafeInteger(images.queue) || images.queue < 0) problems.push(`.files() images.queue must be an integer of 0 or more (got ${images.queue})`);
  return problems;
}

import { createHash } from "node:crypto";
import { RpcError, errorResponse, readStream, type AppStorage, type ByteRange, type RequestEvent } from "../../kernel/index.js";
import { FILES_BYTES_MISSING, FILES_IMAGES_BUSY, FILES_NOT_AN_IMAGE } from "./errors.js";
import { contentDisposition } from "./file-name.js";
import type { ImageFormat, ResolvedImages } from "./image-options.js";
import { FORMAT_TYPES, negotiateFormat } from "./negotiate.js";
import { matchesEtag, requestedRange } from "./ranges.js";
import type { StoredFile } from "./records.js";
import { essenceOf } from "./media-type.js";
import { fallbackFormat, infoFromSignature, inspect, isTransformable, loadSharp, svgRefused, transform, type Resize } from "./transform.js";
import { WorkLimit } from "./work-limit.js";

/** The keys a variant can be cached under: the negotiated modern formats, or `auto` for the fallback. */
const SLOTS = ["avif", "webp", "auto"] as const;
const KNOWN_CAP = 50_000;

/**
 * Image variants over the file store: each made on first request, then kept in the same store
 * under a key derived from the file's key, the variant's settings and the format, and served from
 * there as an original is (ETag, conditional requests, ranges).
 */
export class FileImages {
  readonly limit: WorkLimit;
  /** Variants being made right now, by cache key: concurrent first requests share one transform. */
  readonly #making = new Map<string, Promise<Uint8Array>>();
  /** Additions to a file's list of stored variants, by the file's key: run one at a time. */
  readonly #listing = new Map<string, Promise<void>>();
  /** Size and format of variants stored in this process's lifetime, by cache key. */
  readonly #known = new Map<string, { size: number; format: ImageFormat }>();

  constructor(
    readonly images: ResolvedImages,
    readonly storage: AppStorage,
  ) {
    this.limit = new WorkLimit(images.concurrency, images.queue);
  }

  /** Whether variants can be made of this file at all. */
  accepts(type: string): boolean {
    return isTransformable(type, this.images);
  }

  /** The URL of each named variant of an image, for its record. */
  variantUrls(url: string): Record<string, string> {
    return Object.fromEntries(Object.keys(this.images.variants).map((name) => [name, `${url}?variant=${encodeURIComponent(name)}`]));
  }

  /**
   * Every key stored for variants of the file at `key`, for removal with it, the list itself last:
   * those it lists, whatever the settings they were made under, and those the current settings can
   * occupy (variants stored before files kept a list). Forgotten here at once.
   */
  async cachedKeys(key: string): Promise<string[]> {
    const current = Object.entries(this.images.variants).flatMap(([name, spec]) => SLOTS.map((slot) => cacheKey(key, { ...spec, variant: name }, slot)));
    const keys = [...new Set([...(await this.#listed(key)), ...current]), listKey(key)];
    for (const cached of keys) this.#known.delete(cached);
    return keys;
  }

  /** The variant keys listed for the file at `fileKey`. */
  async #listed(fileKey: string): Promise<string[]> {
    const bytes = await this.storage.get(listKey(fileKey));
    return bytes ? new TextDecoder().decode(bytes).split("\n").filter(Boolean) : [];
  }

  /**
   * Adds `key` to the file's list before the variant is stored, so a variant is never stored
   * unlisted. The store has no listing by prefix, so the list is how deleting the file finds
   * variants made under settings that have since changed. One file's additions run one at a time here.
   */
  #list(fileKey: string, key: string): Promise<void> {
    const adding = (this.#listing.get(fileKey) ?? Promise.resolve()).then(async () => {
      const listed = await this.#listed(fileKey);
      if (!listed.includes(key)) await this.storage.set(listKey(fileKey), new TextEncoder().encode([...listed, key].join("\n")));
    });
    const settled = adding.catch(() => {});
    this.#listing.set(fileKey, settled);
    void settled.then(() => this.#listing.get(fileKey) === settled && this.#listing.delete(fileKey));
    return adding;
  }

  /**
   * The variant as a response. Named variants are cached; an ad-hoc size (only ever on a signed
   * URL) is made each time, to be cached by the CDN or browser in front.
   */
  async respond(event: RequestEvent, found: StoredFile, resize: Resize & { variant?: string }, download: boolean, cacheControl: string): Promise<Response> {
    const type = found.record.type;
    if (!this.accepts(type)) {
      if (essenceOf(type) === "image/svg+xml") throw svgRefused();
      throw new RpcError(FILES_NOT_AN_IMAGE, { status: 415, message: `Variants are made from images; file ${found.record.id} is ${essenceOf(type)}` });
    }
    const modern = negotiateFormat(event.headers.get("accept"), this.images.formats, "auto" as ImageFormat);
    const slot = modern === ("auto" as ImageFormat) ? "auto" : (modern as "avif" | "webp");
    const key = cacheKey(found.key, resize, slot);
    const etag = etagOf(key);
    const negotiated = this.images.formats.length > 0;
    // A variant served before: its size and format are known, so it streams from the store as an
    // original does, and a 304 reads nothing.
    const known = resize.variant ? this.#known.get(key) : undefined;
    if (known) {
      const response = await variantResponse(event, found, { size: known.size, read: (range) => readStream(this.storage, key, range) }, known.format, etag, download, cacheControl, negotiated);
      if (response) return response;
      this.#known.delete(key);
    }
    let bytes: Uint8Array | null = resize.variant ? await this.#read(key) : null;
    if (!bytes) {
      try {
        bytes = await this.#make(key, found, resize, slot, resize.variant !== undefined);
      } catch (error) {
        if (error instanceof RpcError && error.code === FILES_IMAGES_BUSY) {
          const response = errorResponse(error, false);
          response.headers.set("retry-after", "1");
          return response;
        }
        throw error;
      }
    }
    const made = bytes;
    const format = slot === "auto" ? sniffFormat(made) : slot;
    if (resize.variant) this.#remember(key, { size: made.byteLength, format });
    const body = { size: made.byteLength, read: async (range?: ByteRange) => (range ? made.subarray(range.start, range.end + 1) : made) };
    return (await variantResponse(event, found, body, format, etag, download, cacheControl, negotiated))!;
  }

  #remember(key: string, entry: { size: number; format: ImageFormat }): void {
    // Bounded: past the cap the oldest entry goes (it is read from the store again when asked for).
    if (this.#known.size >= KNOWN_CAP) this.#known.delete(this.#known.keys().next().value!);
    this.#known.set(key, entry);
  }

  /** Stored bytes as the store's stream gives them: a view, not a copy, from the memory store. */
  async #read(key: string): Promise<Uint8Array | null> {
    const stream = await readStream(this.storage, key);
    if (!stream) return null;
    const chunks: Uint8Array[] = [];
    for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
    if (chunks.length === 1) return chunks[0]!;
    return new Uint8Array(Buffer.concat(chunks));
  }

  #make(key: string, found: StoredFile, resize: Resize, slot: (typeof SLOTS)[number], store: boolean): Promise<Uint8Array> {
    const pending = this.#making.get(key);
    if (pending) return pending;
    const making = this.limit
      .run(async () => {
        const original = await this.#read(found.key);
        if (!original) throw new RpcError(FILES_BYTES_MISSING, { status: 410, message: `The file ${found.record.id} is listed but its contents are no longer stored; upload it again` });
        const sharp = await loadSharp();
        const info = infoFromSignature(original) ?? (await inspect(sharp, original, this.images));
        const out = await transform(sharp, original, info, resize, slot === "auto" ? fallbackFormat(info) : slot, this.images);
        if (store) {
          await this.#list(found.key, key);
          await this.storage.set(key, out);
        }
        return out;
      })
      .finally(() => this.#making.delete(key));
    this.#making.set(key, making);
    return making;
  }
}

const settingsHashes = new Map<string, string>();

/** Settings are part of the key: changing a variant's size makes new variants rather than serving stale ones. */
function cacheKey(fileKey: string, resize: Resize & { variant?: string }, slot: string): string {
  const settings = JSON.stringify([resize.width ?? null, resize.height ?? null, resize.fit, resize.quality ?? null]);
  let hash = settingsHashes.get(settings);
  if (hash === undefined) {
    hash = createHash("sha256").update(settings).digest("hex").slice(0, 12);
    // Named variants are few; ad-hoc sizes are bounded by what was signed, and the map by this cap.
    if (settingsHashes.size < 10_000) settingsHashes.set(settings, hash);
  }
  return `${fileKey}/variants/${resize.variant ?? "size"}-${hash}.${slot}`;
}

/** Where a file's stored variants are listed: beside them, under a name no variant key takes (those end in `-<hash>.<slot>`). */
function listKey(fileKey: string): string {
  return `${fileKey}/variants/list`;
}

function etagOf(key: string): string {
  return `"${createHash("sha256").update(key).digest("base64url").slice(0, 27)}"`;
}

/** The fallback formats, told apart by their first bytes. */
function sniffFormat(bytes: Uint8Array): ImageFormat {
  if (bytes[0] === 0x89 && bytes[1] === 0x50) return "png";
  if (bytes[0] === 0x47 && bytes[1] === 0x49) return "gif";
  return "jpeg";
}

/**
 * Headers, 304, ranges and HEAD as for an original; `body.read` gives the bytes (or the range of
 * them). Null when the store no longer holds them, so the caller can make them again.
 */
async function variantResponse(
  event: RequestEvent,
  found: StoredFile,
  body: { size: number; read(range?: ByteRange): Promise<ReadableStream<Uint8Array> | Uint8Array | null> },
  format: ImageFormat,
  etag: string,
  download: boolean,
  cacheControl: string,
  negotiated: boolean,
): Promise<Response | null> {
  const name = found.record.name.replace(/\.[A-Za-z0-9]{1,5}$/, "") + `.${format === "jpeg" ? "jpg" : format}`;
  const headers = new Headers({
    "content-type": FORMAT_TYPES[format],
    "content-disposition": contentDisposition(download ? "attachment" : "inline", name),
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'none'; sandbox",
    etag,
    "accept-ranges": "bytes",
    "cache-control": cacheControl,
  });
  // The same URL answers AVIF, WebP or JPEG by `Accept`: caches must key on it.
  if (negotiated) headers.set("vary", "Accept");
  if (matchesEtag(event.headers.get("if-none-match"), etag)) return new Response(null, { status: 304, headers });
  const { size } = body;
  const range = requestedRange(event.headers.get("range"), event.headers.get("if-range"), etag, size);
  if (range === "unsatisfiable") {
    const response = errorResponse(new RpcError("RANGE_NOT_SATISFIABLE", { status: 416, message: `Range not satisfiable for ${size} bytes` }), false);
    response.headers.set("content-range", `bytes */${size}`);
    return response;
  }
  if (range) headers.set("content-range", `bytes ${range.start}-${range.end}/${size}`);
  headers.set("content-length", String(range ? range.end - range.start + 1 : size));
  const status = range ? 206 : 200;
  if (event.method === "HEAD") return new Response(null, { status, headers });
  const bytes = await body.read(range);
  return bytes ? new Response(bytes as BodyInit, { status, headers }) : null;
}

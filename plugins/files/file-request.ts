import { RpcError } from "../../kernel/index.js";
import { FILES_UNKNOWN_VARIANT } from "./errors.js";
import { VARIANT_FITS, type ResolvedImages, type VariantFit } from "./image-options.js";
import type { Resize } from "./transform.js";

/** What a download URL asks for, read from its query: `variant`, `w`/`h`/`fit`, `download`, `expires`/`sig`. */
export interface FileRequest {
  /** The transform a signature is bound to: `variant:<name>`, `size:<w>x<h>:<fit>`, or `""` for the original. */
  transform: string;
  resize?: Resize & { variant?: string };
  /** An ad-hoc size, which only a signed URL may ask for. */
  adHoc: boolean;
  download: boolean;
  signature?: { expires: number; sig: string };
}

/** What `context.files.sign` and `file.sign` take for the transform. */
export type SignedTransform = string | { width?: number; height?: number; fit?: VariantFit };

function bad(message: string, path: string): RpcError<any, any> {
  return new RpcError("BAD_REQUEST", { message, data: { path } });
}

/** Either a named variant, or a size bounded by `maxSize`; `""` for none. Throws 400 naming what is wrong. */
export function transformOf(images: ResolvedImages | undefined, variant: SignedTransform | undefined): Pick<FileRequest, "transform" | "resize" | "adHoc"> {
  if (variant === undefined) return { transform: "", adHoc: false };
  if (typeof variant === "string") {
    const spec = images?.variants[variant];
    if (!spec || !Object.hasOwn(images!.variants, variant)) {
      const names = Object.keys(images?.variants ?? {});
      throw new RpcError(FILES_UNKNOWN_VARIANT, {
        status: 400,
        message: names.length > 0 ? `Unknown variant "${variant}"; the variants are ${names.join(", ")}` : `Unknown variant "${variant}": no image variants are configured (.files({ images: { variants } }))`,
        data: { path: "variant" },
      });
    }
    return { transform: `variant:${variant}`, resize: { ...spec, variant }, adHoc: false };
  }
  if (!images) throw bad("Ad-hoc sizes need image support: configure .files({ images })", "variant");
  const { width, height, fit = "inside" } = variant;
  for (const [side, value] of [["w", width], ["h", height]] as const) {
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 1 || value > images.maxSize)) throw bad(`${side} must be an integer from 1 to ${images.maxSize}`, side);
  }
  if (width === undefined && height === undefined) throw bad("An ad-hoc size needs w, h or both", "w");
  if (!VARIANT_FITS.includes(fit)) throw bad(`fit must be one of ${VARIANT_FITS.join(", ")}`, "fit");
  return { transform: `size:${width ?? ""}x${height ?? ""}:${fit}`, resize: { width, height, fit }, adHoc: true };
}

/** The URL's query as a `FileRequest`; malformed parameters are 400. */
export function parseFileRequest(url: URL, images: ResolvedImages | undefined): FileRequest {
  const query = url.searchParams;
  const variant = query.get("variant");
  const sized = query.has("w") || query.has("h") || query.has("fit");
  if (variant !== null && sized) throw bad("Ask for a variant or for a size (w, h, fit), not both", "variant");
  const side = (name: "w" | "h") => {
    const raw = query.get(name);
    if (raw === null) return undefined;
    if (!/^[1-9][0-9]{0,5}$/.test(raw)) throw bad(`${name} must be a positive integer`, name);
    return Number(raw);
  };
  const fit = query.get("fit") ?? undefined;
  const chosen = transformOf(images, variant ?? (sized ? { width: side("w"), height: side("h"), fit: fit as VariantFit | undefined } : undefined));
  const expires = query.get("expires");
  const sig = query.get("sig");
  if ((expires === null) !== (sig === null)) throw bad("A signed URL has both expires and sig", expires === null ? "expires" : "sig");
  if (expires !== null && !/^[0-9]{1,12}$/.test(expires)) throw bad("expires must be a Unix time in seconds", "expires");
  return { ...chosen, download: query.has("download"), ...(expires !== null && sig !== null ? { signature: { expires: Number(expires), sig } } : {}) };
}

/** The query string of a URL signed for `request`. */
export function signedQuery(request: Pick<FileRequest, "resize" | "adHoc" | "download">, expires: number, sig: string): string {
  const query = new URLSearchParams();
  const resize = request.resize;
  if (resize?.variant) query.set("variant", resize.variant);
  else if (resize && request.adHoc) {
    if (resize.width !== undefined) query.set("w", String(resize.width));
    if (resize.height !== undefined) query.set("h", String(resize.height));
    query.set("fit", resize.fit);
  }
  if (request.download) query.set("download", "");
  query.set("expires", String(expires));
  query.set("sig", sig);
  return query.toString().replace("download=&", "download&");
}

import { RpcError } from "../../kernel/index.js";
import { FILES_SIGNING_OFF, FILES_URL_EXPIRED, FILES_URL_INVALID } from "./errors.js";
import { signedQuery, transformOf, type FileRequest, type SignedTransform } from "./file-request.js";
import type { ResolvedImages } from "./image-options.js";
import { FileRows } from "./records.js";
import type { UrlSigner } from "./signing.js";

export interface SignOptions {
  /** Seconds the URL works for; at most `signing.maxExpiresIn`. */
  expiresIn: number;
  /** A configured variant's name, or an ad-hoc size `{ width?, height?, fit? }` (only signed URLs may ask for one). */
  variant?: SignedTransform;
  /** Served as an attachment (`Content-Disposition: attachment`) rather than inline. */
  download?: boolean;
}

/** `context.files`: what server code may do with files beyond the `file.*` procedures. */
export interface FilesService {
  /**
   * A URL for the file that works without a session until it expires (for `<img>` in mail, a CDN,
   * another service), bound to the file, the variant and the disposition. Absolute when the app has
   * a `baseUrl`. It grants what it names to whoever holds it: sign only for callers who may get the file.
   */
  sign(id: string, options: SignOptions): string;
}

/**
 * Signs download URLs. It checks no permission: `file.sign` does, before calling it, and server code
 * calling `context.files.sign` decides for itself.
 */
export function filesService(deps: { signer: UrlSigner; images: ResolvedImages | undefined; path: string; baseUrl: string | undefined; maxExpiresIn: number; secretName: string }): FilesService {
  return {
    sign(id, options) {
      if (!deps.signer.enabled) {
        throw new RpcError(FILES_SIGNING_OFF, { status: 501, message: `Signed URLs are off: set the secret ${deps.secretName} (32 characters or more) in the app's secrets` });
      }
      if (!FileRows.plausibleId(id)) throw new RpcError("BAD_REQUEST", { message: "id is not a file id", data: { path: "id" } });
      const { expiresIn } = options;
      if (!Number.isSafeInteger(expiresIn) || expiresIn < 1 || expiresIn > deps.maxExpiresIn) {
        throw new RpcError("BAD_REQUEST", { message: `expiresIn must be a whole number of seconds from 1 to ${deps.maxExpiresIn}`, data: { path: "expiresIn" } });
      }
      const chosen = transformOf(deps.images, options.variant);
      const download = options.download === true;
      const expires = Math.floor(Date.now() / 1000) + expiresIn;
      const sig = deps.signer.sign({ id, transform: chosen.transform, download, expires });
      const path = deps.path.replace(":id", encodeURIComponent(id));
      return `${deps.baseUrl ? deps.baseUrl.replace(/\/$/, "") : ""}${path}?${signedQuery({ ...chosen, download }, expires, sig)}`;
    },
  };
}

/**
 * The seconds a signed request has left; 403 when its signature does not match what it asks for
 * (another file, variant, size or disposition, or a key never ours), 410 once it expired. 410, not
 * 403: the URL was genuine and will never work again, so the client should sign a new one.
 */
export function checkSignature(signer: UrlSigner, id: string, request: FileRequest): number {
  const { expires, sig } = request.signature!;
  const verdict = signer.verify({ id, transform: request.transform, download: request.download, expires }, sig);
  if (verdict === "invalid") throw new RpcError(FILES_URL_INVALID, { status: 403, message: "The URL's signature does not match: it was changed, or signed for another file, variant or disposition" });
  if (verdict === "expired") throw new RpcError(FILES_URL_EXPIRED, { status: 410, message: "The signed URL has expired; ask for a new one" });
  return Math.max(0, expires - Math.floor(Date.now() / 1000));
}

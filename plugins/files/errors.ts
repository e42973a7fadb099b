/** Error codes of the files plugin (see docs/errors.md). */
export const FILES_NO_STORAGE = "FILES_NO_STORAGE";
export const FILES_NO_TABLE = "FILES_NO_TABLE";
export const FILES_BAD_PATH = "FILES_BAD_PATH";
export const FILES_OWNER_WITHOUT_COLUMN = "FILES_OWNER_WITHOUT_COLUMN";
export const FILES_BAD_OPTION = "FILES_BAD_OPTION";
/** A download whose row exists but whose bytes are gone from storage: 410. */
export const FILES_BYTES_MISSING = "FILES_BYTES_MISSING";
/** Images: a header larger than `images.maxInputPixels` (422), bytes that are no image (422), SVG not allowed (415). */
export const FILES_IMAGE_TOO_LARGE = "FILES_IMAGE_TOO_LARGE";
export const FILES_IMAGE_UNREADABLE = "FILES_IMAGE_UNREADABLE";
export const FILES_SVG_REFUSED = "FILES_SVG_REFUSED";
/** A variant asked of a file that is not an image (415), or a variant name not configured (400). */
export const FILES_NOT_AN_IMAGE = "FILES_NOT_AN_IMAGE";
export const FILES_UNKNOWN_VARIANT = "FILES_UNKNOWN_VARIANT";
/** More transforms waiting than `images.queue` allows: 503 with `Retry-After`. */
export const FILES_IMAGES_BUSY = "FILES_IMAGES_BUSY";
/** Signed URLs: a signature that does not match (403), one that expired (410), signing not set up (501). */
export const FILES_URL_INVALID = "FILES_URL_INVALID";
export const FILES_URL_EXPIRED = "FILES_URL_EXPIRED";
export const FILES_SIGNING_OFF = "FILES_SIGNING_OFF";
/** An ad-hoc size (`?w=&h=`) without a signature: 403. */
export const FILES_SIZE_NEEDS_SIGNATURE = "FILES_SIZE_NEEDS_SIGNATURE";
/** `images` configured without the `sharp` package installed: a build-time error. */
export const FILES_SHARP_MISSING = "FILES_SHARP_MISSING";

/** Error codes of the files plugin (see docs/errors.md). */
export const FILES_NO_STORAGE = "FILES_NO_STORAGE";
export const FILES_NO_TABLE = "FILES_NO_TABLE";
export const FILES_BAD_PATH = "FILES_BAD_PATH";
export const FILES_OWNER_WITHOUT_COLUMN = "FILES_OWNER_WITHOUT_COLUMN";
export const FILES_BAD_OPTION = "FILES_BAD_OPTION";
/** A download whose row exists but whose bytes are gone from storage: 410. */
export const FILES_BYTES_MISSING = "FILES_BYTES_MISSING";

/** Error codes of the files plugin (build time; see docs/errors.md). */
export const FILES_NO_STORAGE = "FILES_NO_STORAGE";
export const FILES_NO_TABLE = "FILES_NO_TABLE";
export const FILES_BAD_PATH = "FILES_BAD_PATH";
export const FILES_OWNER_WITHOUT_COLUMN = "FILES_OWNER_WITHOUT_COLUMN";
export const FILES_BAD_OPTION = "FILES_BAD_OPTION";

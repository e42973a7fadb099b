/** `trellis/storage`: object stores for file bytes. */
export { memoryStorage } from "./memory.js";
export { fromStore, type RawStore } from "./unstorage.js";
export { fromObjectStore, type ObjectStoreClient, type ObjectStoreCommands } from "./object-store.js";
export { readStream, writeStream } from "./streams.js";
export type { AppStorage, ByteRange } from "./contract.js";

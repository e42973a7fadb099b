/** `trellis/kv`. */
export { memoryKV } from "./memory.js";
export type { AppKV } from "../resources.js";

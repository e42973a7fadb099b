/** `trellis/kv`. */
export { memoryKV } from "./memory.js";
export type { AppKV } from "../contracts/resources.js";

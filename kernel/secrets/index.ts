/** `trellis/secrets`. */
export { fromEnv, fromRecord, fromSchema, memorySecrets } from "./secrets.js";
export type { StandardSchemaV1 } from "./standard-schema.js";
export type { AppSecrets } from "../contracts/resources.js";

import { App, type AppOptions } from "trellis";
import { requestIdPlugin } from "./request-id.js";

/** The default preset plus an in-house plugin. */
export function createAppWithRequestIds(db: AppOptions["db"]) {
  return new App({ name: "with-request-ids", db }).use(requestIdPlugin());
}

/**
 * Observation points of the kernel: procedures, SQL statements, the wait for a database connection,
 * and storage calls. A plugin adds an `Observer` to the app's `Instrumentation` (the service
 * `"instrumentation"`); the telemetry plugin turns what it sees into spans and metrics.
 */
export { Instrumentation, type Observer, type StorageOperation } from "./instrumentation.js";
export { observedDialect } from "./database.js";
export { observedStorage } from "./storage.js";
export type { SpanOptions, Telemetry } from "./telemetry.js";

declare module "../services.js" {
  interface AppServices {
    /** The app's observation points; add an `Observer` to see procedures, statements and storage calls. */
    instrumentation: import("./instrumentation.js").Instrumentation;
  }
}

/** Error codes of the telemetry plugin (listed in docs/errors.md). */

/** `traces: true` or `metrics` is set but its optional package is not installed. */
export const TELEMETRY_PEER_MISSING = "TELEMETRY_PEER_MISSING";
/** A telemetry option is malformed (a metrics path without a leading slash, an empty token). */
export const TELEMETRY_BAD_OPTION = "TELEMETRY_BAD_OPTION";

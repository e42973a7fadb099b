/** Error codes of the webhooks plugin (see docs/errors.md). */
/** An endpoint's url, secret, tables, events or timeout is wrong. */
export const WEBHOOKS_BAD_ENDPOINT = "WEBHOOKS_BAD_ENDPOINT";
/** An endpoint subscribes to a table the latest schema does not have. */
export const WEBHOOKS_UNKNOWN_TABLE = "WEBHOOKS_UNKNOWN_TABLE";
/** standardwebhooks is not installed. */
export const WEBHOOKS_PEER_MISSING = "WEBHOOKS_PEER_MISSING";

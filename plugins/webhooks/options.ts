import { TrellisError } from "../../kernel/index.js";
import { WEBHOOKS_BAD_ENDPOINT } from "./errors.js";

/** Retry delays, as the jobs service takes them: `false` retries at once. */
export type Backoff = false | { delay?: number; exponential?: boolean };

export type WebhookEvent = "insert" | "update" | "delete";

export interface WebhookEndpoint {
  /** Where deliveries are POSTed (http or https). */
  url: string;
  /** The signing secret, base64 (a `whsec_` prefix is allowed), 24 to 64 bytes, as Standard Webhooks specifies. */
  secret: string;
  /** Tables of the latest schema whose committed changes are delivered. */
  tables: readonly string[];
  /**
   * Which writes are delivered.
   * @default ["insert", "update", "delete"]
   */
  events?: readonly WebhookEvent[];
  /**
   * Seconds to wait for the receiver's answer; longer counts as a failed attempt.
   * @default 10
   */
  timeout?: number;
  /**
   * What `data` carries: `"keys"`, the primary keys of the rows written; `"rows"`, also the rows
   * after the change (`rows`), the rows before it for updates and deletes (`before`) and who made
   * it (`actor`), so a receiver needs no call back. Rows hold every column, as the database has them:
   * subscribe only receivers that may see them.
   * @default "keys"
   */
  payload?: "keys" | "rows";
}

export interface WebhooksConfig {
  endpoints: readonly WebhookEndpoint[];
  /**
   * Retries after a failed attempt (non-2xx answer, timeout, network error).
   * @default 5
   */
  retry?: number;
  /** @default { delay: 5, exponential: true } (about 5 s, 10 s, 20 s, ... with jitter) */
  backoff?: Backoff;
  /**
   * Deliveries in flight at once per process.
   * @default 5
   */
  concurrency?: number;
}

export interface ResolvedEndpoint {
  url: string;
  secret: string;
  tables: ReadonlySet<string>;
  events: ReadonlySet<WebhookEvent>;
  timeout: number;
  payload: "keys" | "rows";
}

const EVENTS: readonly WebhookEvent[] = ["insert", "update", "delete"];

export function resolveEndpoints(config: WebhooksConfig): ResolvedEndpoint[] {
  if (!config || !Array.isArray(config.endpoints)) throw bad(".webhooks() needs { endpoints: [{ url, secret, tables }] }");
  const seen = new Set<string>();
  return config.endpoints.map((endpoint, index) => {
    const where = `.webhooks() endpoint ${index}`;
    let url: URL;
    try {
      url = new URL(endpoint.url);
    } catch {
      throw bad(`${where}: url "${endpoint.url}" is not an absolute URL`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") throw bad(`${where}: url must be http or https (got ${url.protocol})`);
    if (url.username || url.password) throw bad(`${where}: url must not carry a user or password (fetch refuses such a url; receivers authenticate deliveries by their signature)`);
    if (seen.has(url.href)) throw bad(`${where}: url ${url.href} is listed twice`);
    seen.add(url.href);
    const bytes = secretBytes(endpoint.secret);
    if (bytes === undefined || bytes < 24 || bytes > 64) throw bad(`${where}: secret must be 24 to 64 bytes in base64, optionally prefixed "whsec_"`);
    if (!Array.isArray(endpoint.tables) || endpoint.tables.length === 0) throw bad(`${where}: tables must list at least one table`);
    const events = endpoint.events ?? EVENTS;
    const unknown = events.filter((event: WebhookEvent) => !EVENTS.includes(event));
    if (unknown.length) throw bad(`${where}: unknown events ${unknown.join(", ")} (use insert, update, delete)`);
    const timeout = endpoint.timeout ?? 10;
    if (!(timeout > 0 && timeout <= 300)) throw bad(`${where}: timeout must be 1 to 300 seconds`);
    const payload = endpoint.payload ?? "keys";
    if (payload !== "keys" && payload !== "rows") throw bad(`${where}: payload must be "keys" or "rows" (got ${JSON.stringify(payload)})`);
    return { url: url.href, secret: endpoint.secret, tables: new Set(endpoint.tables), events: new Set(events), timeout, payload };
  });
}

function secretBytes(secret: unknown): number | undefined {
  if (typeof secret !== "string") return undefined;
  const base64 = secret.startsWith("whsec_") ? secret.slice(6) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) return undefined;
  return Buffer.from(base64, "base64").length;
}

function bad(message: string): TrellisError {
  return new TrellisError(WEBHOOKS_BAD_ENDPOINT, message, { plugin: "webhooks", hook: "validate" });
}

import type { ResolvedEndpoint } from "./options.js";

/** What a delivery job carries: the message, never the secret (that stays in the config). */
export interface Delivery {
  /** The endpoint's url, looked up again at delivery (a removed endpoint is skipped). */
  url: string;
  /** `webhook-id`: the same on every attempt, so receivers can drop duplicates. */
  id: string;
  /** The Standard Webhooks payload: `{ type, timestamp, data }`. */
  payload: { type: string; timestamp: string; data: DeliveryData };
}

/** `data` of a delivery: the change's keys, and with `payload: "rows"` its rows and actor. */
export interface DeliveryData {
  table: string;
  op: string;
  keys?: readonly unknown[];
  /** The rows after the change (the removed rows, for a delete). */
  rows?: readonly Record<string, unknown>[];
  /** The rows before an update or a delete, in the order of `rows` (null where unknown). */
  before?: readonly (Record<string, unknown> | null)[];
  actor?: { kind: string; userId: string | null; admin: boolean };
  /** The organization of the rows written, when the table's resource is tenant-scoped (docs/organizations.md). */
  organizationId?: string;
}

interface Signer {
  sign(msgId: string, timestamp: Date, payload: string): string;
}

/**
 * How much of a receiver's answer is read: a receiver answering a huge body (by mistake or on
 * purpose) must not hold the app's memory; the rest is discarded by closing the connection.
 */
export const ANSWER_READ_LIMIT = 64 * 1024;

/** Jobs treat this failure as expected: retried and logged, not reported to `onError`. */
const EXPECTED_FAILURE = Symbol.for("trellis.jobs.expected");

/**
 * One attempt: POST the payload signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`
 * of this attempt, `webhook-signature`). A 2xx answer completes the job; anything else, a timeout
 * or a network error fails the attempt, and the jobs engine retries it with backoff.
 */
export async function deliver(delivery: Delivery, endpoint: ResolvedEndpoint, signer: Signer, signal: AbortSignal): Promise<{ status: number }> {
  const body = JSON.stringify(delivery.payload);
  const now = new Date();
  let response: Response;
  try {
    response = await fetch(endpoint.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": "trellis-webhooks",
        "webhook-id": delivery.id,
        "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
        "webhook-signature": signer.sign(delivery.id, now, body),
      },
      body,
      // A redirect is an answer, not a new destination: the signature was made for this url.
      redirect: "manual",
      signal: AbortSignal.any([signal, AbortSignal.timeout(endpoint.timeout * 1000)]),
    });
  } catch (error) {
    const reason = (error as Error).name === "TimeoutError" ? `no answer within ${endpoint.timeout} s` : withCause(error as Error);
    throw expected(`webhook ${delivery.id} to ${endpoint.url}: ${reason}`);
  }
  await drain(response.body);
  if (response.status < 200 || response.status > 299) throw expected(`webhook ${delivery.id} to ${endpoint.url}: answered ${response.status}`);
  return { status: response.status };
}

/**
 * Reads and drops a small answer, so the connection is reused; past `ANSWER_READ_LIMIT` bytes the
 * body is cancelled, which closes the connection instead of reading the rest.
 */
async function drain(body: ReadableStream<Uint8Array> | null): Promise<void> {
  if (!body) return;
  const reader = body.getReader();
  let read = 0;
  try {
    while (read <= ANSWER_READ_LIMIT) {
      const { done, value } = await reader.read();
      if (done) return;
      read += value.byteLength;
    }
    await reader.cancel();
  } catch {
    // A body that breaks off is no concern of the delivery: its status is the answer.
  }
}

/** `fetch failed` says nothing: the cause does (`connect ECONNREFUSED 127.0.0.1:4100`, `ENOTFOUND`). */
function withCause(error: Error): string {
  const cause = error.cause as { message?: string; code?: string } | undefined;
  if (!cause) return error.message;
  const detail = cause.message || cause.code;
  return detail ? `${error.message} (${detail})` : error.message;
}

function expected(message: string): Error {
  return Object.assign(new Error(message), { [EXPECTED_FAILURE]: true });
}

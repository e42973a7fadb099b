import type { Telemetry } from "../../kernel/index.js";
import type { Delivery, QueuedMail } from "./delivery.js";
import { PendingWork } from "./pending-work.js";

/**
 * The shape of the jobs plugin's service that mail uses: `define` at build, `send` at request
 * time. Declared here rather than imported, so mail depends on the shape, not on the plugin.
 */
export interface JobsLike {
  define(name: string, options: Record<string, unknown>, handler: (input: any) => Promise<unknown> | unknown): void;
  send(name: string, data: unknown, options?: Record<string, unknown>): Promise<unknown> | unknown;
}

export const MAIL_JOB = "mail.send";

/** Jobs treat a failure so marked as expected: retried and logged, not reported to `onError`. */
const EXPECTED_FAILURE = Symbol.for("trellis.jobs.expected");

export interface MailQueue {
  push(mail: QueuedMail): void;
  /** Resolves when every message queued in this process so far is settled. */
  idle(): Promise<void>;
}

/**
 * In process: each message is delivered on a later turn of the event loop (after the request that
 * queued it has answered), retried `retries` times with a growing pause (cut short when the app
 * starts closing), and its final failure handed to `failed` (the app's `onError`).
 */
export function processQueue(
  delivery: Delivery,
  options: { retries: number; retryDelayMs: number; failed: (error: unknown) => void; closing: AbortSignal; telemetry: Telemetry | undefined },
): MailQueue {
  const pending = new PendingWork();
  const run = async (mail: QueuedMail) => {
    // Delivered after the request answered: each attempt is a trace of its own, linked to the
    // span that queued the message.
    const queuedBy = options.telemetry?.spanContext();
    await new Promise((resolve) => setImmediate(resolve));
    if (!(await delivery.prepare(mail))) return;
    for (let attempt = 1; ; attempt++) {
      try {
        return await delivery.attempt(mail, attempt, { root: true, links: queuedBy && [queuedBy] });
      } catch (error) {
        // The app is closing: the row says "failed" with the error; no retry outlives the database.
        if (attempt > options.retries || options.closing.aborted) return options.failed(error);
        await pause(options.retryDelayMs * attempt, options.closing);
      }
    }
  };
  return {
    // Started now, not on a later microtask: the span that queued the message is read here.
    push: (mail) => pending.track(run(mail).catch(options.failed)),
    idle: () => pending.idle(),
  };
}

/**
 * Through the jobs plugin: the message is a `mail.send` job (stored, retried with backoff by the
 * jobs engine, surviving a restart). A job that cannot be queued falls back to the in-process queue.
 */
export function jobsQueue(jobs: JobsLike, delivery: Delivery, fallback: MailQueue, failed: (error: unknown) => void): MailQueue {
  jobs.define(MAIL_JOB, { retry: 5, backoff: { delay: 2, exponential: true } }, async (input) => {
    const mail = (isMail(input) ? input : input?.data) as QueuedMail;
    const job = input?.job as { attempt: number; attempts: number } | undefined;
    if (!(await delivery.prepare(mail))) return;
    try {
      await delivery.attempt(mail, job?.attempt ?? 1);
    } catch (error) {
      // Logged and recorded on the row already; only the last attempt's failure is the app's to hear.
      if (job && job.attempt < job.attempts && error instanceof Error) Object.assign(error, { [EXPECTED_FAILURE]: true });
      throw error;
    }
  });
  return {
    push(mail) {
      Promise.resolve()
        .then(() => jobs.send(MAIL_JOB, mail))
        .catch((error) => {
          failed(error);
          fallback.push(mail);
        });
    },
    idle: () => fallback.idle(),
  };
}

/** Waits `ms`, or less when the app starts closing: a message waiting for its retry gets its last attempt then. */
function pause(ms: number, closing: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      closing.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    timer.unref?.();
    closing.addEventListener("abort", done);
  });
}

function isMail(value: unknown): value is QueuedMail {
  return typeof value === "object" && value !== null && "id" in value && "to" in value;
}

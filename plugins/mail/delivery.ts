import { randomUUID } from "node:crypto";
import type { Logger } from "../../kernel/index.js";
import type { SpanOptions, Telemetry } from "../../kernel/index.js";
import type { MailLimiter } from "./limits.js";
import type { MailRows } from "./outbox.js";
import type { OpenTransport } from "./transports.js";

/** A message on its way: rendered, with the id its row will carry. */
export interface QueuedMail {
  id: string;
  kind: string;
  to: string;
  subject: string;
  text: string;
  html: string | null;
  link: string | null;
  /** An auth message, counted against the per-address limit. */
  limited: boolean;
}

let sequence = 0;

/** Ids sort by creation time (then a counter), so the newest row is found without a timestamp tie. */
export function mailId(): string {
  return `${Date.now().toString(36).padStart(9, "0")}${(sequence++ % 1296).toString(36).padStart(2, "0")}-${randomUUID()}`;
}

export interface DeliveryDeps {
  rows: MailRows;
  transport: () => OpenTransport;
  from: string;
  limiter: MailLimiter | undefined;
  logger: Logger | undefined;
  /** The telemetry plugin's service, when the app has it. */
  telemetry: Telemetry | undefined;
  /** Told when a message's row is written (or the message dropped), whichever way it went. */
  recorded?: (id: string) => void;
}

/** OpenTelemetry's `SpanKind.CLIENT`, as a number: the API may not be installed. */
const CLIENT = 2;

/**
 * One delivery attempt and its bookkeeping: the first attempt checks the per-address limit and
 * writes the row (state `queued`); every attempt ends in `sent`, or `failed` with the error, so a
 * failure is visible in the mail table and the log, and never reaches the request that queued it.
 */
export class Delivery {
  constructor(private readonly deps: DeliveryDeps) {}

  /** Writes the row unless it exists (a retry); false when the per-address limit drops the message. */
  async prepare(mail: QueuedMail): Promise<boolean> {
    try {
      return await this.#prepare(mail);
    } finally {
      this.deps.recorded?.(mail.id);
    }
  }

  async #prepare(mail: QueuedMail): Promise<boolean> {
    if (await this.deps.rows.get(mail.id)) return true;
    if (mail.limited && this.deps.limiter && !(await this.deps.limiter.allowAddress(mail.to))) {
      this.deps.logger?.warn({ to: mail.to, kind: mail.kind }, `mail to ${mail.to} dropped: the hourly limit for this address is reached`);
      return false;
    }
    const transport = this.deps.transport();
    await this.deps.rows.insert({ id: mail.id, kind: mail.kind, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html, link: mail.link, transport: transport.name });
    return true;
  }

  /**
   * Sends once in a `mail send` span (a child of the active span, or as `trace` says); records the
   * outcome; rethrows the transport's error so a caller may retry. The span names the transport,
   * the message's kind and id, never its addresses or content.
   */
  attempt(mail: QueuedMail, attempt: number, trace: Pick<SpanOptions, "root" | "links"> = {}): Promise<void> {
    const { telemetry } = this.deps;
    if (!telemetry) return this.#send(mail, attempt);
    const attributes = { "trellis.mail.transport": this.deps.transport().name, "trellis.mail.kind": mail.kind, "trellis.mail.id": mail.id, "trellis.mail.attempt": attempt };
    return telemetry.span(
      "mail send",
      (span) =>
        this.#send(mail, attempt).then(
          () => void span?.setAttribute("trellis.mail.outcome", "sent"),
          (error: unknown) => {
            span?.setAttribute("trellis.mail.outcome", "failed");
            throw error;
          },
        ),
      { kind: CLIENT, attributes, ...trace },
    );
  }

  async #send(mail: QueuedMail, attempt: number): Promise<void> {
    const transport = this.deps.transport();
    try {
      await transport.send({ from: this.deps.from, to: mail.to, subject: mail.subject, text: mail.text, ...(mail.html ? { html: mail.html } : {}) }, mail.link ?? undefined);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      await this.deps.rows.settle(mail.id, "failed", attempt, message.slice(0, 1000));
      this.deps.logger?.error({ to: mail.to, kind: mail.kind, attempt, err: message }, `mail to ${mail.to} failed (attempt ${attempt}): ${message}`);
      throw error;
    }
    await this.deps.rows.settle(mail.id, "sent", attempt, null);
  }
}

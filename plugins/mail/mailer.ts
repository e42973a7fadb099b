import { TrellisError } from "../../kernel/index.js";
import { mailId, type QueuedMail } from "./delivery.js";
import { MAIL_BAD_MESSAGE } from "./errors.js";
import type { MailMessage } from "./options.js";
import type { MailQueue } from "./queue.js";
import { defaultTemplate, type MailKind, type MailTemplate, type MailTemplateData } from "./templates.js";

/** The `mail` service: `context.mail` in procedures and routes, `ctx.need("mail")` in plugins. */
export interface Mailer {
  /**
   * Queues a message and returns at once with its id; it is sent after the current request has
   * answered (or by the jobs plugin), and its state is kept in the mail table.
   */
  send(message: MailMessage): Promise<{ id: string }>;
  /** Renders a message kind with the app's templates (the built-in one unless replaced). */
  render(kind: MailKind, data: Omit<MailTemplateData, "appName">): { subject: string; text: string; html: string };
  /** Resolves when every message queued in this process so far is settled (tests, scripts). */
  flush(): Promise<void>;
}

export interface MailerInternals extends Mailer {
  /**
   * Queues an auth message of `kind`, rendered. Counted against the per-address limit unless
   * `limited` is false: a security notice follows a signed-in action, and must not be silenced by
   * someone else's reset requests filling the address's quota.
   */
  queueAuth(kind: MailKind, data: Omit<MailTemplateData, "appName">, options?: { limited?: boolean }): void;
}

export function createMailer(appName: string, templates: Partial<Record<MailKind, MailTemplate>>, queue: () => MailQueue): MailerInternals {
  const render = (kind: MailKind, data: Omit<MailTemplateData, "appName">) => (templates[kind] ?? defaultTemplate(kind))({ appName, ...data });
  return {
    async send(message) {
      const problem = checkMessage(message);
      if (problem) throw new TrellisError(MAIL_BAD_MESSAGE, `context.mail.send(): ${problem}`, { plugin: "mail" });
      const mail: QueuedMail = { id: mailId(), kind: "custom", to: message.to, subject: message.subject, text: message.text, html: message.html ?? null, link: null, limited: false };
      queue().push(mail);
      return { id: mail.id };
    },
    render,
    flush: () => queue().idle(),
    queueAuth(kind, data, options) {
      const rendered = render(kind, data);
      queue().push({ id: mailId(), kind, to: data.to, ...rendered, link: data.link ?? null, limited: options?.limited ?? true });
    },
  };
}

function checkMessage(message: MailMessage | undefined): string | undefined {
  if (!message || typeof message !== "object") return "pass { to, subject, text, html? }";
  if (typeof message.to !== "string" || !/^[^\s@<>]+@[^\s@<>]+$/.test(message.to)) return `"to" must be one email address, got ${JSON.stringify(message.to)}`;
  if (typeof message.subject !== "string" || message.subject.trim() === "") return `"subject" must be a non-empty string`;
  if (/[\r\n]/.test(message.subject)) return `"subject" must be one line`;
  if (typeof message.text !== "string") return `"text" must be a string (the plain-text body)`;
  if (message.html !== undefined && typeof message.html !== "string") return `"html" must be a string when given`;
  return undefined;
}

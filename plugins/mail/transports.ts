import { importPeer, type Logger } from "../../kernel/index.js";
import type { MailTransport, OutgoingMail, ResolvedMail } from "./options.js";

export const NODEMAILER = "nodemailer";

/** A transport ready to deliver, and the name the mail table records for it. */
export interface OpenTransport {
  name: "smtp" | "outbox" | "custom";
  send(message: OutgoingMail, link: string | undefined): Promise<void>;
  close(): void;
}

/**
 * The transport named in the options. SMTP goes through nodemailer (pooled connections, so a burst
 * of messages reuses them); the outbox delivers nothing: the row in the mail table is the message,
 * and its link is printed to the log so a developer can follow it.
 */
export async function openTransport(resolved: ResolvedMail["transport"], logger: Logger | undefined): Promise<OpenTransport> {
  switch (resolved.kind) {
    case "smtp": {
      const nodemailer = await importPeer<{ default: { createTransport(url: string): SmtpClient } }>(NODEMAILER, "The SMTP mail transport");
      const client = nodemailer.default.createTransport(withPool(resolved.url));
      return {
        name: "smtp",
        send: async (message) => void (await client.sendMail(message)),
        close: () => client.close(),
      };
    }
    case "custom":
      return { name: "custom", send: (message) => (resolved.transport as MailTransport).send(message), close: () => {} };
    default:
      return {
        name: "outbox",
        send: async (message, link) => {
          const line = `mail to ${message.to}: "${message.subject}"${link ? ` ${link}` : ""}`;
          // Through the app's logger only: `logger: false` (and a test runner) print nothing.
          logger?.info({ to: message.to, subject: message.subject, link }, line);
        },
        close: () => {},
      };
  }
}

interface SmtpClient {
  sendMail(message: OutgoingMail): Promise<unknown>;
  close(): void;
}

/** Pooled unless the URL says otherwise (`?pool=false`). */
function withPool(url: string): string {
  const parsed = new URL(url);
  if (!parsed.searchParams.has("pool")) parsed.searchParams.set("pool", "true");
  return parsed.toString();
}

import { SMTPServer } from "smtp-server";

/** A message as the test SMTP server received it, decoded. */
export interface ReceivedMail {
  from: string;
  to: string[];
  headers: Map<string, string>;
  subject: string;
  text: string;
  html: string;
  /** The first http(s) link of the text part. */
  link: string | undefined;
}

export interface TestSmtp {
  url: string;
  port: number;
  received: ReceivedMail[];
  /** The next message to `to` not yet taken (waits up to `ms`, 15 s by default: sending takes seconds on a loaded machine). */
  next(to: string, ms?: number): Promise<ReceivedMail>;
  /** Messages to `to` not yet taken, after waiting `ms` for stragglers. */
  settle(to: string, ms?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

/** A real SMTP server on a loopback port (the `smtp-server` package), keeping what it receives. */
export async function startSmtp(options: { reject?: boolean; delayMs?: number } = {}): Promise<TestSmtp> {
  const received: ReceivedMail[] = [];
  const taken = new Set<ReceivedMail>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onAuth(auth, _session, callback) {
      callback(null, { user: auth.username });
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", async () => {
        // A distant server: the answer to DATA comes late.
        if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
        if (options.reject) return callback(Object.assign(new Error("Mailbox unavailable"), { responseCode: 550 }));
        received.push(parse(Buffer.concat(chunks).toString("utf8"), session.envelope.mailFrom ? (session.envelope.mailFrom as { address: string }).address : "", session.envelope.rcptTo.map((r) => r.address)));
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as { port: number }).port;
  const pending = (to: string) => received.filter((mail) => !taken.has(mail) && mail.to.includes(to.toLowerCase()));
  return {
    url: `smtp://tester:secret@127.0.0.1:${port}`,
    port,
    received,
    async next(to, ms = 15_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const [mail] = pending(to);
        if (mail) {
          taken.add(mail);
          return mail;
        }
        if (Date.now() > deadline) throw new Error(`no message to ${to} within ${ms} ms`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    async settle(to, ms = 300) {
      await new Promise((resolve) => setTimeout(resolve, ms));
      const mails = pending(to);
      for (const mail of mails) taken.add(mail);
      return mails;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function parse(raw: string, from: string, to: string[]): ReceivedMail {
  const { headers, body } = split(raw);
  const parts: { type: string; body: string }[] = [];
  collect(headers, body, parts);
  const text = parts.find((part) => part.type.startsWith("text/plain"))?.body ?? "";
  const html = parts.find((part) => part.type.startsWith("text/html"))?.body ?? "";
  return { from, to: to.map((address) => address.toLowerCase()), headers, subject: decodeWords(headers.get("subject") ?? ""), text, html, link: /https?:\/\/\S+/.exec(text)?.[0] };
}

function split(raw: string): { headers: Map<string, string>; body: string } {
  const index = raw.indexOf("\r\n\r\n");
  const head = raw.slice(0, index).replace(/\r\n[ \t]+/g, " ");
  const headers = new Map<string, string>();
  for (const line of head.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { headers, body: raw.slice(index + 4) };
}

function collect(headers: Map<string, string>, body: string, parts: { type: string; body: string }[]): void {
  const type = headers.get("content-type") ?? "text/plain";
  const boundary = /boundary="?([^";]+)"?/.exec(type)?.[1];
  if (type.startsWith("multipart/") && boundary) {
    for (const chunk of body.split(`--${boundary}`).slice(1)) {
      if (chunk.startsWith("--")) break;
      const part = split(chunk.replace(/^\r\n/, ""));
      collect(part.headers, part.body, parts);
    }
    return;
  }
  const encoding = (headers.get("content-transfer-encoding") ?? "7bit").toLowerCase();
  let decoded = body.replace(/\r\n$/, "");
  if (encoding === "quoted-printable") decoded = quotedPrintable(decoded);
  if (encoding === "base64") decoded = Buffer.from(decoded.replace(/\s+/g, ""), "base64").toString("utf8");
  parts.push({ type, body: decoded.replace(/\r\n/g, "\n") });
}

function quotedPrintable(value: string): string {
  const bytes = value.replace(/=\r\n/g, "").replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return Buffer.from(bytes, "latin1").toString("utf8");
}

function decodeWords(value: string): string {
  return value.replace(/=\?utf-8\?([qb])\?([^?]*)\?=\s*/gi, (_, mode: string, text: string) =>
    mode.toLowerCase() === "b" ? Buffer.from(text, "base64").toString("utf8") : quotedPrintable(text.replace(/_/g, " ")),
  );
}

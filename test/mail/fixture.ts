import { schema } from "../../kernel/schema/index.js";
import { App, type AppOptions } from "../../presets/trellis.js";
import type { DatabaseConfig } from "../../kernel/index.js";
import type { MailConfig, Mailer } from "../../plugins/mail/index.js";
import { ORIGIN, cookieOf } from "../support/auth.js";

export const SECRET = "a-test-secret-that-is-long-enough-0123456789";
export const PASSWORD = "correct-horse-battery-staple";
export const v1 = schema("1").auth().build();

/** Mail is under test, not password hashing: a cheap stand-in keeps these files fast (scrypt is ~100 ms a call here). */
const FAST_HASH = {
  hash: async (password: string) => `plain:${password}`,
  verify: async ({ hash, password }: { hash: string; password: string }) => hash === `plain:${password}`,
};

type Handler = { handle(request: Request, facts?: { clientAddress?: string }): Promise<Response> };

/** An app with email and password sign-in, mail and the admin API. */
export function mailApp(db: DatabaseConfig, mail: Partial<MailConfig>, auth: Record<string, unknown> = {}, options: Partial<AppOptions> = {}) {
  return new App({ name: "Test <App>", baseUrl: ORIGIN, db, ...options })
    .schema(v1)
    .auth({ secret: SECRET, emailAndPassword: { enabled: true, password: FAST_HASH }, ...auth })
    .mail({ from: "Test App <no-reply@example.test>", ...mail })
    .admin()
    .procedure("notify", (base) => base.handler(async ({ context }) => context.mail.send({ to: "someone@example.test", subject: "Hello", text: "Plain", html: "<p>Plain</p>" })));
}

export interface Answer {
  status: number;
  body: any;
  headers: Headers;
  cookie: string;
}

/** A JSON POST to the auth library as a browser sends it (with `Origin`). */
export async function post(app: Handler, path: string, body: unknown, options: { cookie?: string; clientAddress?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const response = await app.handle(
    new Request(`${ORIGIN}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: ORIGIN, ...options.headers, ...(options.cookie ? { cookie: options.cookie } : {}) },
      body: JSON.stringify(body),
    }),
    options.clientAddress ? { clientAddress: options.clientAddress } : undefined,
  );
  return answer(response);
}

export async function get(app: Handler, url: string, cookie?: string): Promise<Answer> {
  const target = url.startsWith("http") ? url : `${ORIGIN}${url}`;
  return answer(await app.handle(new Request(target, { headers: cookie ? { cookie } : {} })));
}

async function answer(response: Response): Promise<Answer> {
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body, headers: response.headers, cookie: cookieOf(response) };
}

export function signUpBody(email: string, name = email.split("@")[0]) {
  return { email, password: PASSWORD, name };
}

/** The app's mail service, as plugins reach it. */
export function mailOf(app: { sealed: { service(key: string): unknown } }): Mailer {
  return app.sealed.service("mail") as Mailer;
}

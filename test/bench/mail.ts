import { SqliteDialect } from "kysely";
import Database from "better-sqlite3";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import type { Mailer } from "../../plugins/mail/index.js";
import { ORIGIN } from "../support/auth.js";
import { startSmtp } from "../support/smtp.js";
import { compare, print } from "./measure.js";

/**
 * Sign-up with email verification on (the message sent through SMTP) against the same sign-up
 * without it. The send happens after the response, so the SMTP round trip must not show: the
 * figures with a loopback server and with a server that takes 100 ms to accept a message should
 * both stay near the sign-up without mail.
 */
const SECRET = "bench-secret-bench-secret-bench-secret-0123";
const v1 = schema("1").auth().build();
// scrypt (100-400 ms a sign-up on a busy 2-core machine) would hide a few milliseconds either way:
// a cheap stand-in leaves what mail adds visible.
const PLAIN = { hash: async (password: string) => `plain:${password}`, verify: async ({ hash, password }: { hash: string; password: string }) => hash === `plain:${password}` };

async function setup(smtpUrl: string | undefined) {
  let app = new App({ baseUrl: ORIGIN, db: { dialect: new SqliteDialect({ database: new Database(":memory:") }), kind: "sqlite" }, onError: () => {} })
    .schema(v1)
    .auth({ secret: SECRET, emailAndPassword: { enabled: true, password: PLAIN } });
  if (smtpUrl) app = app.mail({ transport: smtpUrl, from: "Bench <bench@example.test>", limits: false }) as never;
  return app.start();
}

export async function run(): Promise<void> {
  const near = await startSmtp();
  const far = await startSmtp({ delayMs: 100 });
  const apps = { off: await setup(undefined), near: await setup(near.url), far: await setup(far.url) };
  let n = 0;
  const signUp = (app: typeof apps.off) => async () => {
    const email = `user${n++}@example.test`;
    const response = await app.handle(
      new Request(`${ORIGIN}/api/auth/sign-up/email`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: ORIGIN },
        body: JSON.stringify({ email, password: "correct-horse-battery-staple", name: "Bench" }),
      }),
    );
    if (response.status !== 200) throw new Error(`sign-up ${response.status}`);
  };
  const stats = await compare(
    [
      { name: "sign-up, no mail", op: signUp(apps.off) },
      { name: "sign-up + verification, SMTP loopback", op: signUp(apps.near) },
      { name: "sign-up + verification, SMTP +100 ms", op: signUp(apps.far) },
    ],
    { rounds: 3, warmup: 20, count: 300 },
  );
  print("Sign-up with and without the verification email", stats, { of: "sign-up + verification, SMTP +100 ms", to: "sign-up, no mail", target: 0.8 });
  for (const app of [apps.near, apps.far]) await (app.sealed.service("mail") as Mailer).flush();
  console.log(`  delivered: loopback ${near.received.length}, slow ${far.received.length}`);
  await Promise.all(Object.values(apps).map((app) => app.close()));
  await near.close();
  await far.close();
}

import { describe, expectTypeOf, it } from "vitest";
import { App } from "../../presets/trellis.js";
import { schema } from "../../kernel/schema/index.js";
import type { ServiceOf } from "../../kernel/index.js";
import type { Mailer, MailTemplate } from "../../plugins/mail/index.js";
import { sqliteMemory } from "../support/app.js";

const v1 = schema("1").auth().build();

describe("mail types", () => {
  it("types context.mail after .mail(), and the mail service for plugins", () => {
    new App({ db: sqliteMemory() })
      .schema(v1)
      .auth({ secret: "x".repeat(32) })
      .mail({ from: "App <a@example.test>" })
      .procedure("invite", (base) =>
        base.handler(async ({ context }) => {
          expectTypeOf(context.mail).toEqualTypeOf<Mailer>();
          expectTypeOf(context.mail.send).parameter(0).toEqualTypeOf<{ to: string; subject: string; text: string; html?: string }>();
          expectTypeOf(context.mail.send).returns.resolves.toEqualTypeOf<{ id: string }>();
          return null;
        }),
      );
    expectTypeOf<ServiceOf<"mail">>().toEqualTypeOf<Mailer>();
  });

  it("refuses a template that forgets the HTML", () => {
    // @ts-expect-error html is required
    const bad: MailTemplate = () => ({ subject: "s", text: "t" });
    void bad;
  });

  it("refuses a config without a sender", () => {
    // @ts-expect-error from is required
    new App({ db: sqliteMemory() }).mail({ transport: "outbox" });
  });
});

import { describe, expect, it } from "vitest";
import { App } from "../../presets/trellis.js";
import { sqliteMemory } from "../support/app.js";

/**
 * An endpoint url carrying a user and password (`https://user:pass@host/hooks`, a common way to
 * give a receiver basic auth) was accepted, but fetch refuses such a url: every delivery to it
 * failed ("Request cannot be constructed from a URL that includes credentials") through all its
 * retries, and the password was stored in each delivery job and shown in its error to admins.
 */
const SECRET = `whsec_${Buffer.from("a-webhook-secret-of-32-bytes!!!!").toString("base64")}`;

describe(".webhooks() with credentials in an endpoint's url", () => {
  it("is refused at the call, without echoing the password", () => {
    let thrown: any;
    try {
      new App({ db: sqliteMemory() }).webhooks({ endpoints: [{ url: "https://hooks:s3cret-pass@example.com/in", secret: SECRET, tables: ["post"] }] });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: "WEBHOOKS_BAD_ENDPOINT", message: ".webhooks() endpoint 0: url must not carry a user or password (fetch refuses such a url; receivers authenticate deliveries by their signature)" });
    expect(thrown.message).not.toContain("s3cret");
  });
});

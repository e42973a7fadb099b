import { describe, expect, it } from "vitest";
import type { OutgoingMail } from "../../plugins/mail/index.js";
import { rpc, sqliteMemory } from "../support/app.js";
import { mailApp } from "../mail/fixture.js";
import { waitFor } from "../jobs/support.js";

/**
 * In process, a failed message waits `retryDelayMs` times its attempt number before its next
 * attempt, and the app's closing was meant to end that pause. It did not: close() waited for the
 * pause (up to its five-second cap), then closed the database under it; a longer pause ran its
 * attempt after close() had returned, against a closed transport and database.
 */
describe("close() while a message waits for its retry", () => {
  it("ends the pause: the message gets its last attempt now, and close() does not wait out the delay", async () => {
    const errors: unknown[] = [];
    const attempts: number[] = [];
    const transport = {
      send: async (_message: OutgoingMail) => {
        attempts.push(Date.now());
        throw new Error(`421 try later (${attempts.length})`);
      },
    };
    const app: any = await mailApp(sqliteMemory(), { transport, retries: 3, retryDelayMs: 30_000 }, {}, { onError: (error) => void errors.push(error) }).start();
    const { status, body } = await rpc(app, "notify");
    expect(status).toBe(200);
    await waitFor("the first attempt", async () => (await app.db.selectFrom("trellis_mail").selectAll().where("id", "=", body.id).executeTakeFirst())?.state === "failed");
    const closing = Date.now();
    await app.close();
    expect(Date.now() - closing).toBeLessThan(2_000);
    // The last attempt ran while closing, and its failure is the final one, reported once.
    expect(attempts).toHaveLength(2);
    expect(errors.map((error) => (error as Error).message)).toEqual(["421 try later (2)"]);
  }, 30_000);
});

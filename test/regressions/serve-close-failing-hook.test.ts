import { describe, expect, it } from "vitest";
import type { AppPlugin } from "../../kernel/index.js";
import { App } from "../../presets/trellis.js";
import { serve } from "../../presets/node.js";
import { sqliteMemory } from "../support/app.js";

/**
 * `serve().close()` cuts the connections still open once the app is closed (a stream that would
 * never end). When closing the app failed (a plugin's close hook threw), `close()` rejected before
 * that step: the server kept every open connection, so a response streaming forever held the
 * process alive after its shutdown.
 */
const failingClose: AppPlugin = {
  name: "failing-close",
  build(ctx) {
    ctx.hooks.close.tap(async () => {
      throw new Error("the queue could not be stopped");
    });
  },
};

const within = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([promise, new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), ms))]);

describe("serve().close() when closing the app fails", () => {
  it("rejects with the failure and still ends the connections left open", async () => {
    const app = new App({ db: sqliteMemory() })
      .use(failingClose)
      .route("GET", "/forever", () => new Response(new ReadableStream({ start: (controller) => controller.enqueue(new TextEncoder().encode("first\n")) }), { headers: { "content-type": "text/plain" } }));
    const server = await serve(app, { port: 0, hostname: "127.0.0.1", banner: false, handleSignals: false });
    const response = await fetch(`${server.url}/forever`);
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("first\n");

    await expect(server.close()).rejects.toThrow("the queue could not be stopped");
    const ended = reader.read().then(
      ({ done }) => (done ? "ended" : "more"),
      () => "ended",
    );
    expect(await within(ended, 5_000)).toBe("ended");
    expect(server.server.listening).toBe(false);
  }, 20_000);
});

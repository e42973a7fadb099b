import { afterEach, describe, expect, it } from "vitest";
import { embedded } from "../../kernel/embedded/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { serve, type RunningServer } from "../../presets/node.js";

/**
 * `close()` of a served app (and so SIGTERM): new connections are refused, a request in flight
 * still gets its answer, and open streams (live queries) are ended rather than waited for, since
 * they never end on their own.
 */
const v1 = schema("1").table("note", (t) => ({ id: t.serial().primaryKey(), text: t.text() })).build();

let running: RunningServer | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

/** Settles with what `promise` gave, or "pending" once `ms` have passed: a hang fails the test instead of timing it out. */
const within = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([promise, new Promise<"pending">((resolve) => setTimeout(() => resolve("pending"), ms).unref())]);

async function start(slowMs = 0) {
  let entered: () => void = () => {};
  const slowStarted = new Promise<void>((resolve) => (entered = resolve));
  const app = new App({ db: embedded({ dataDir: "memory://" }) })
    .schema(v1)
    .resource("note", { live: true })
    .route("GET", "/slow", async () => {
      entered();
      await new Promise((resolve) => setTimeout(resolve, slowMs));
      return Response.json({ finished: true });
    });
  running = await serve(app, { port: 0, hostname: "127.0.0.1", handleSignals: false, banner: false });
  return { server: running, slowStarted };
}

async function openLive(url: string) {
  const response = await fetch(`${url}/rpc/note/live`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ json: {} }),
  });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const readUntil = async (marker: string) => {
    while (!text.includes(marker)) {
      const chunk = await reader.read();
      if (chunk.done) break;
      text += decoder.decode(chunk.value, { stream: true });
    }
    return text;
  };
  return { readUntil };
}

describe("serve().close()", () => {
  it("ends an open live stream instead of waiting for it, and the client is told the stream is done", async () => {
    const { server } = await start();
    const live = await openLive(server.url);
    expect(await live.readUntil('data: {"json":[]}')).toContain("event: message");

    const closed = server.close();
    expect(await within(closed, 20_000)).toBeUndefined();
    running = undefined;
    expect(await within(live.readUntil("event: done"), 5_000)).toContain("event: done");
  }, 90_000); // the process's first memory:// database builds the template: slow on a loaded machine

  it("lets a request in flight finish with its answer, and refuses new connections", async () => {
    const { server, slowStarted } = await start(300);
    const slow = fetch(`${server.url}/slow`);
    await slowStarted;
    const closed = server.close();
    running = undefined;
    const answer = await slow;
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ finished: true });
    expect(await within(closed, 20_000)).toBeUndefined();
    await expect(fetch(`${server.url}/health`)).rejects.toThrow();
  }, 90_000);
});

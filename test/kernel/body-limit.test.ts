import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { App } from "../../presets/trellis.js";
import { sqliteMemory } from "../support/app.js";

const app = new App({ db: sqliteMemory(), bodyLimit: 1000 })
  .procedure("size", (base) => base.input(z.object({ text: z.string() })).handler(({ input }) => input.text.length))
  .route("POST", "/raw", async (event) => ({ bytes: (await event.request.arrayBuffer()).byteLength }))
  .build();
afterAll(() => app.close());

const payload = (length: number) => JSON.stringify({ json: { text: "x".repeat(length) } });
function chunked(body: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(body);
  return new ReadableStream({
    start(controller) {
      for (let i = 0; i < bytes.length; i += 100) controller.enqueue(bytes.slice(i, i + 100));
      controller.close();
    },
  });
}

describe("body limit", () => {
  it("refuses a declared Content-Length over the limit with 413 in the RPC envelope", async () => {
    const body = payload(2000);
    const response = await app.handle(
      new Request("http://localhost/rpc/size", { method: "POST", headers: { "content-type": "application/json", "content-length": String(body.length) }, body }),
    );
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ json: { code: "PAYLOAD_TOO_LARGE", status: 413 } });
  });

  it("counts a body without Content-Length and refuses it once it passes the limit", async () => {
    const response = await app.handle(
      new Request("http://localhost/raw", {
        method: "POST",
        headers: { "transfer-encoding": "chunked" },
        body: chunked("y".repeat(5000)),
        duplex: "half",
      } as RequestInit),
    );
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ code: "PAYLOAD_TOO_LARGE", status: 413 });
  });

  it("passes bodies within the limit, chunked or not", async () => {
    const small = await app.handle(
      new Request("http://localhost/rpc/size", {
        method: "POST",
        headers: { "content-type": "application/json", "transfer-encoding": "chunked" },
        body: chunked(payload(500)),
        duplex: "half",
      } as RequestInit),
    );
    expect(await small.json()).toEqual({ json: 500 });
    const raw = await app.handle(new Request("http://localhost/raw", { method: "POST", body: "z".repeat(900) }));
    expect(await raw.json()).toEqual({ bytes: 900 });
  });
});

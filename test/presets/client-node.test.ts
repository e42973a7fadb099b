import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { App, RpcError, type InferRouter } from "../../presets/trellis.js";
import { createClient } from "../../presets/client.js";
import { serve, type RunningServer } from "../../presets/node.js";
import { sqliteMemory } from "../support/app.js";
import * as root from "../../presets/trellis.js";

function createApp() {
  return new App({ db: sqliteMemory() })
    .route("GET", "/who", (event) => ({ address: event.clientAddress ?? null }))
    .procedure("echo", (base) =>
      base
        .input(z.object({ at: z.date(), bytes: z.instanceof(Uint8Array), big: z.string() }))
        .handler(({ input }) => ({ at: input.at, bytes: input.bytes, big: input.big })),
    )
    .procedure("fail", (base) =>
      base.handler(() => {
        throw new RpcError("CONFLICT", { message: "taken" });
      }),
    );
}

describe("trellis/node serve() and the trellis/client typed client", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await serve(createApp(), { port: 0, hostname: "127.0.0.1", handleSignals: false });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("serves health over real HTTP", async () => {
    const response = await fetch(`${server.url}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ok", database: "up" });
  });

  it("round-trips Date and Uint8Array through the typed client", async () => {
    const client = createClient<InferRouter<ReturnType<typeof createApp>>>({ url: server.url });
    const at = new Date("2024-01-01T00:00:00.000Z");
    const result = await client.echo({ at, bytes: new Uint8Array([1, 2, 3]), big: "9007199254740993" });
    expect(result.at).toBeInstanceOf(Date);
    expect(result.at.toISOString()).toBe(at.toISOString());
    expect([...result.bytes]).toEqual([1, 2, 3]);
    expect(result.big).toBe("9007199254740993");
  });

  it("decodes errors as RpcError with their status", async () => {
    const client = createClient<InferRouter<ReturnType<typeof createApp>>>({ url: server.url });
    await expect(client.fail()).rejects.toMatchObject({ code: "CONFLICT", status: 409, message: "taken" });
  });

  it("takes the client address from the socket, not from forwarded headers, without trustProxy", async () => {
    const response = await fetch(`${server.url}/who`, { headers: { "x-forwarded-for": "6.6.6.6", "x-real-ip": "6.6.6.6" } });
    expect(await response.json()).toEqual({ address: "127.0.0.1" });
  });
});

describe("entry points", () => {
  it("the root exports exactly the runtime members of the spec that exist so far", () => {
    expect(Object.keys(root).sort()).toEqual(["App", "RpcError", "liveIterable", "mcp", "memoryRateLimitStore"]);
  });
});

describe("body limit over real HTTP", () => {
  it("refuses an oversized chunked upload with 413", async () => {
    const running = await serve(new App({ db: sqliteMemory(), bodyLimit: 1000 }).route("POST", "/upload", async (event) => ({ bytes: (await event.request.arrayBuffer()).byteLength })), {
      port: 0,
      hostname: "127.0.0.1",
      handleSignals: false,
    });
    try {
      const stream = (size: number) =>
        new ReadableStream<Uint8Array>({
          start(controller) {
            for (let sent = 0; sent < size; sent += 256) controller.enqueue(new Uint8Array(256));
            controller.close();
          },
        });
      const big = await fetch(`${running.url}/upload`, { method: "POST", body: stream(4096), duplex: "half" } as RequestInit);
      expect(big.status).toBe(413);
      const small = await fetch(`${running.url}/upload`, { method: "POST", body: stream(512), duplex: "half" } as RequestInit);
      expect(await small.json()).toEqual({ bytes: 512 });
    } finally {
      await running.close();
    }
  });
});

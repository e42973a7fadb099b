import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type TestDatabase } from "../support/databases.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";
import { ENVELOPE_BYTES } from "../../plugins/files/procedures.js";
import { bytes, filesApp, upload, uploadForm } from "./fixture.js";

const LIMIT = 64 * 1024;

/** A multipart upload generated on the fly: `total` file bytes, counting what the server pulled. */
function generatedUpload(total: number): { stream: ReadableStream<Uint8Array>; boundary: string; pulled: () => number } {
  const boundary = "----trellis-test-boundary";
  const head = new TextEncoder().encode(
    `--${boundary}\r\nContent-Disposition: form-data; name="data"\r\n\r\n{"json":{"file":{}},"maps":[["file"]]}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="0"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const chunk = new Uint8Array(64 * 1024).fill(7);
  let sent = 0;
  let pulled = 0;
  let headSent = false;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (!headSent) {
        headSent = true;
        pulled += head.byteLength;
        controller.enqueue(head);
      } else if (sent < total) {
        const piece = chunk.subarray(0, Math.min(chunk.byteLength, total - sent));
        sent += piece.byteLength;
        pulled += piece.byteLength;
        controller.enqueue(piece);
      } else {
        controller.enqueue(new TextEncoder().encode(`\r\n--${boundary}--\r\n`));
        controller.close();
      }
    },
  });
  return { stream, boundary, pulled: () => pulled };
}

describe("upload limits", () => {
  let database: TestDatabase;
  let app: Awaited<ReturnType<ReturnType<typeof filesApp>["start"]>>;
  let ada: SignedIn;
  beforeAll(async () => {
    database = await openDatabase("sqlite");
    app = await filesApp(database, { files: { maxBytes: LIMIT, accept: ["image/*", "Application/PDF", "text/plain; charset=utf-8"] } }).start();
    ada = await signUp(app, "ada@example.test");
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });
  const cookie = () => ({ cookie: ada.cookie });

  it("takes a file of exactly maxBytes and refuses one byte more with 413, inside the envelope allowance too", async () => {
    expect((await upload(app, uploadForm(new Blob([bytes(LIMIT)], { type: "image/png" }), "max.png"), cookie())).status).toBe(200);
    const over = await upload(app, uploadForm(new Blob([bytes(LIMIT + 1)], { type: "image/png" }), "over.png"), cookie());
    expect(over).toMatchObject({ status: 413, body: { code: "PAYLOAD_TOO_LARGE", message: `File is larger than ${LIMIT} bytes` } });
    expect(await app.client(cookie()).file.upload({ file: new File([bytes(LIMIT + 1)], "over.png", { type: "image/png" }) }).catch((error) => error.status)).toBe(413);
  });

  it("refuses a declared Content-Length over the limit before reading the body", async () => {
    const { stream, boundary, pulled } = generatedUpload(10 * LIMIT);
    const response = await app.handle(
      new Request(`${ORIGIN}/rpc/file/upload`, {
        method: "POST",
        headers: { ...cookie(), "content-type": `multipart/form-data; boundary=${boundary}`, "content-length": String(10 * LIMIT + 400) },
        body: stream,
        duplex: "half",
      } as RequestInit),
    );
    expect(response.status).toBe(413);
    expect((await response.json()).json).toMatchObject({ code: "PAYLOAD_TOO_LARGE" });
    expect(pulled()).toBeLessThan(LIMIT);
  });

  for (const [label, headers] of [
    ["chunked", { "transfer-encoding": "chunked" }],
    ["without Content-Length or Transfer-Encoding", {}],
  ] as const) {
    it(`counts a ${label} body and stops reading as soon as it passes the limit`, async () => {
      const { stream, boundary, pulled } = generatedUpload(200 * 1024 * 1024);
      const response = await app.handle(
        new Request(`${ORIGIN}/rpc/file/upload`, {
          method: "POST",
          headers: { ...cookie(), ...headers, "content-type": `multipart/form-data; boundary=${boundary}` },
          body: stream,
          duplex: "half",
        } as RequestInit),
      );
      expect(response.status).toBe(413);
      // Read no further than the limit plus the envelope allowance and the pieces already in flight.
      expect(pulled()).toBeLessThan(LIMIT + ENVELOPE_BYTES + 4 * 64 * 1024);
    });
  }

  it("keeps memory bounded: a 200 MB upload against a 10 MB limit", async () => {
    const own = await openDatabase("sqlite");
    const big = await filesApp(own, { files: { maxBytes: 10 * 1024 * 1024 } }).start();
    try {
      global.gc?.();
      const before = process.memoryUsage().rss;
      let peak = before;
      const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
      const { stream, boundary, pulled } = generatedUpload(200 * 1024 * 1024);
      const response = await big.handle(
        new Request(`${ORIGIN}/rpc/file/upload`, {
          method: "POST",
          headers: { ...cookie(), "transfer-encoding": "chunked", "content-type": `multipart/form-data; boundary=${boundary}` },
          body: stream,
          duplex: "half",
        } as RequestInit),
      );
      clearInterval(timer);
      peak = Math.max(peak, process.memoryUsage().rss);
      expect(response.status).toBe(413);
      expect(pulled()).toBeLessThan(11 * 1024 * 1024);
      // What was read is held until the limit is passed, never the 200 MB.
      expect((peak - before) / 1024 / 1024).toBeLessThan(40);
    } finally {
      await big.close();
      await own.close();
    }
  });

  it("checks accept against the content type: wildcards, any case, parameters ignored; 415 otherwise", async () => {
    for (const [type, status] of [
      ["image/png", 200],
      ["IMAGE/JPEG", 200],
      ["application/pdf", 200],
      ["text/plain;charset=iso-8859-1", 200],
      ["text/html", 415],
      ["application/octet-stream", 415],
      ["", 415],
      ["imagex/png", 415],
    ] as const) {
      const sent = await upload(app, uploadForm(new Blob(["x"], { type }), "f"), cookie());
      expect(sent.status, type).toBe(status);
      if (status === 415) expect(sent.body).toMatchObject({ code: "UNSUPPORTED_MEDIA_TYPE", message: expect.stringMatching(/is not accepted; accepted: image\/\*, Application\/PDF/) });
    }
  });

  it("answers 400 naming the field for an upload without a file", async () => {
    const response = await app.handle(
      new Request(`${ORIGIN}/rpc/file/upload`, { method: "POST", headers: { ...cookie(), "content-type": "application/json" }, body: JSON.stringify({ json: { file: "nope" } }) }),
    );
    expect(response.status).toBe(400);
    expect((await response.json()).json.message).toMatch(/file: expected a file/);
  });
});

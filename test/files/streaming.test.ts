/**
 * Uploads stream from the request body into storage: refused uploads read no further than they
 * must, a failed or cut-off upload leaves no bytes and no row, and the parts are checked as the
 * platform's multipart parser checked them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppStorage } from "../../kernel/index.js";
import { memoryStorage } from "../../kernel/storage/index.js";
import { openDatabase, type TestDatabase } from "../support/databases.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";
import { filesApp } from "./fixture.js";
import { multipartBody, rpcEnvelope, streamedRequest, BOUNDARY, type BodyPart, type BodyOptions } from "./multipart-body.js";
import { request as httpRequest } from "node:http";
import { serve } from "../../presets/node.js";

const LIMIT = 1024 * 1024;

/** Memory storage that records what reached it: keys stored, chunks streamed in, and can fail mid-stream. */
function recordingStorage() {
  const inner = memoryStorage();
  const state = { keys: new Set<string>(), chunks: [] as Uint8Array[], failAfter: undefined as number | undefined, failedStreams: 0 };
  const storage: AppStorage = {
    get: (key) => inner.get(key),
    set: async (key, bytes) => (await inner.set(key, bytes), void state.keys.add(key)),
    delete: async (key) => (await inner.delete(key), void state.keys.delete(key)),
    getStream: (key, range) => inner.getStream!(key, range),
    async setStream(key, body) {
      const received: Uint8Array[] = [];
      let total = 0;
      try {
        for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
          received.push(chunk);
          total += chunk.byteLength;
          if (state.failAfter !== undefined && total > state.failAfter) throw new Error("the disk is full");
        }
      } catch (error) {
        state.failedStreams++;
        throw error;
      }
      state.chunks.push(...received);
      await inner.set(key, Buffer.concat(received));
      state.keys.add(key);
    },
  };
  return { storage, state };
}

describe("streaming uploads", () => {
  let database: TestDatabase;
  let app: Awaited<ReturnType<ReturnType<typeof filesApp>["start"]>>;
  let ada: SignedIn;
  const recorded = recordingStorage();
  const errors: unknown[] = [];
  beforeAll(async () => {
    database = await openDatabase("sqlite");
    app = await filesApp(database, { storage: recorded.storage, files: { maxBytes: LIMIT, accept: ["image/*", "application/*", "text/plain"] }, onError: (error) => errors.push(error) }).start();
    ada = await signUp(app, "ada@example.test");
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  const send = async (parts: BodyPart[], options: BodyOptions = {}, headers: Record<string, string> = { cookie: ada.cookie }) => {
    const body = multipartBody(parts, options);
    const response = await app.handle(streamedRequest(`${ORIGIN}/rpc/file/upload`, body, headers));
    const parsed = await response.json();
    return { status: response.status, body: parsed.json ?? parsed, pulled: body.pulled(), chunks: body.chunks, length: body.length };
  };
  const file = (size: number, extra: Partial<NonNullable<BodyPart["file"]>> = {}): BodyPart => ({ name: "0", file: { size, ...extra } });
  const rows = async () => Number((await app.db.selectFrom("file").select((eb) => eb.fn.countAll().as("n")).executeTakeFirstOrThrow()).n);
  const nothingLeft = async (before: { rows: number; keys: number }) => {
    expect(await rows()).toBe(before.rows);
    expect(recorded.state.keys.size).toBe(before.keys);
  };
  const snapshot = async () => ({ rows: await rows(), keys: recorded.state.keys.size });

  it("stores the request's own chunks: the file's bytes are never copied on the way to storage", async () => {
    recorded.state.chunks.length = 0;
    const sent = await send([rpcEnvelope(), file(LIMIT, { type: "image/png", filename: "big.png" })]);
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ name: "big.png", type: "image/png", size: LIMIT });
    const stored = recorded.state.chunks;
    expect(stored.reduce((sum, chunk) => sum + chunk.byteLength, 0)).toBe(LIMIT);
    const sentBuffers = new Set(sent.chunks.map((chunk) => chunk.buffer));
    expect(stored.every((chunk) => sentBuffers.has(chunk.buffer as ArrayBuffer))).toBe(true);
  });

  it("answers 413 one byte over maxBytes, leaving nothing behind", async () => {
    const before = await snapshot();
    const sent = await send([rpcEnvelope(), file(LIMIT + 1)], { chunk: 64 * 1024 });
    expect(sent).toMatchObject({ status: 413, body: { code: "PAYLOAD_TOO_LARGE", message: `File is larger than ${LIMIT} bytes` } });
    await nothingLeft(before);
  });

  it("refuses before reading the file: 401 signed out, 415 for a type accept refuses", async () => {
    const before = await snapshot();
    const anonymous = await send([rpcEnvelope(), file(LIMIT)], {}, {});
    expect(anonymous).toMatchObject({ status: 401, body: { code: "UNAUTHORIZED" } });
    expect(anonymous.pulled).toBeLessThan(4 * 64 * 1024);
    const refused = await send([rpcEnvelope(), file(LIMIT, { type: "text/html" })]);
    expect(refused).toMatchObject({ status: 415, body: { code: "UNSUPPORTED_MEDIA_TYPE" } });
    expect(refused.pulled).toBeLessThan(4 * 64 * 1024);
    await nothingLeft(before);
  });

  it("takes the file before the envelope (curl -F order, other clients), within the same limits", async () => {
    const before = await snapshot();
    const sent = await send([file(5000, { type: "image/png", filename: "first.png" }), rpcEnvelope()]);
    expect(sent).toMatchObject({ status: 200, body: { name: "first.png", type: "image/png", size: 5000 } });
    expect(await rows()).toBe(before.rows + 1);
    const over = await send([file(LIMIT + 1), rpcEnvelope()], { chunk: 64 * 1024 });
    expect(over).toMatchObject({ status: 413, body: { code: "PAYLOAD_TOO_LARGE", message: `File is larger than ${LIMIT} bytes` } });
    // A body that really is malformed says what is wrong with it.
    const noEnvelope = await send([file(10)]);
    expect(noEnvelope).toMatchObject({ status: 400, body: { code: "BAD_REQUEST", message: expect.stringContaining('no "data" part') } });
    const notJson = await send([{ name: "data", value: "{nope" }, file(10)]);
    expect(notJson).toMatchObject({ status: 400, body: { code: "BAD_REQUEST", message: expect.stringContaining('"data" part is not JSON') } });
    expect(await rows()).toBe(before.rows + 1);
  });

  it("leaves no bytes and no row when the client hangs up mid-file, and reports nothing", async () => {
    const before = await snapshot();
    errors.length = 0;
    const cut = await send([rpcEnvelope(), file(LIMIT)], { failAfter: 256 * 1024 });
    expect(cut.status).toBe(400);
    expect(cut.body.message).toMatch(/ended before the upload did/);
    await nothingLeft(before);
    expect(errors).toEqual([]);
  });

  it("leaves no bytes and no row for a truncated body, a field after the file, or a second file", async () => {
    const before = await snapshot();
    const truncated = await send([rpcEnvelope(), file(1000)], { unterminated: true });
    expect(truncated.status).toBe(400);
    const late = await send([rpcEnvelope(), file(1000), { name: "extra", value: "x" }]);
    expect(late).toMatchObject({ status: 400, body: { message: 'The field "extra" comes after the file: send every field before the file' } });
    const two = await send([rpcEnvelope(), file(1000), { name: "1", file: { size: 10 } }]);
    expect(two).toMatchObject({ status: 400, body: { message: "An upload carries one file" } });
    await nothingLeft(before);
  });

  it("reports a storage failure mid-stream as a 503 naming the storage, leaving no row", async () => {
    const before = await snapshot();
    errors.length = 0;
    recorded.state.failAfter = 100_000;
    try {
      const failed = await send([rpcEnvelope(), file(300_000)]);
      // A failing store is an outage of the storage (docs/operations.md#chaos), never a bare 500.
      expect(failed).toMatchObject({ status: 503, body: { code: "SERVICE_UNAVAILABLE", message: expect.stringContaining("file storage") } });
      expect(JSON.stringify(failed.body)).not.toContain("disk");
    } finally {
      recorded.state.failAfter = undefined;
    }
    await nothingLeft(before);
    expect(errors).toHaveLength(1);
  });

  it("stores a file part without a Content-Type as application/octet-stream, and refuses an oversized envelope", async () => {
    const untyped = await send([rpcEnvelope(), file(10, { type: null })]);
    expect(untyped).toMatchObject({ status: 200, body: { type: "application/octet-stream" } });
    const huge = await send([{ name: "data", value: JSON.stringify({ json: { file: {}, pad: "x".repeat(70_000) }, maps: [["file"]] }) }, file(10)]);
    expect(huge).toMatchObject({ status: 413, body: { code: "PAYLOAD_TOO_LARGE" } });
  });

  it("over a real socket: a client that hangs up mid-file leaves no bytes, no row and no report", async () => {
    const server = await serve(app, { port: 0, hostname: "127.0.0.1", handleSignals: false });
    try {
      const before = await snapshot();
      const failed = recorded.state.failedStreams;
      errors.length = 0;
      const head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="data"\r\n\r\n{"json":{"file":{}},"maps":[["file"]]}\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="0"; filename="cut.bin"\r\nContent-Type: image/png\r\n\r\n`;
      await new Promise<void>((resolve) => {
        const request = httpRequest(`${server.url}/rpc/file/upload`, {
          method: "POST",
          headers: { cookie: ada.cookie, "content-type": `multipart/form-data; boundary=${BOUNDARY}`, "content-length": String(head.length + LIMIT) },
        });
        request.on("error", () => resolve());
        request.on("close", () => resolve());
        request.write(head);
        request.write(Buffer.alloc(300_000, 7), () => setTimeout(() => request.destroy(), 100));
      });
      // The server notices the hang-up, fails the upload and cleans up; give it a moment to.
      for (let i = 0; i < 100 && recorded.state.failedStreams === failed; i++) await new Promise((r) => setTimeout(r, 20));
      expect(recorded.state.failedStreams).toBe(failed + 1);
      await nothingLeft(before);
      expect(errors).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

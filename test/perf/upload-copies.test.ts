/**
 * Uploads guarded by counting work, not time: the body is never gathered by the platform's parser
 * (`formData()`, `arrayBuffer()`, `blob()`, `text()`), the file's chunks reach storage as the
 * request carried them (no copy), and a refused upload reads no further than the file's first chunk
 * (plus the one the request stream itself queues ahead).
 */
import { afterAll, beforeEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { AppStorage } from "../../kernel/index.js";
import { memoryStorage } from "../../kernel/storage/index.js";
import { filesApp } from "../files/fixture.js";
import { multipartBody, rpcEnvelope, streamedRequest } from "../files/multipart-body.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";
import { openDatabase, type TestDatabase } from "../support/databases.js";

const CHUNK = 64 * 1024;
const SIZE = 2 * 1024 * 1024;

describe("work per upload", () => {
  let database: TestDatabase;
  let app: Awaited<ReturnType<ReturnType<typeof filesApp>["start"]>>;
  let ada: SignedIn;
  const stored: Uint8Array[] = [];
  const inner = memoryStorage();
  const storage: AppStorage = {
    ...inner,
    async setStream(key, body) {
      const chunks: Uint8Array[] = [];
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
      stored.push(...chunks);
      await inner.set(key, Buffer.concat(chunks));
    },
  };
  const gathered = ["formData", "arrayBuffer", "blob", "text"] as const;
  const spies = gathered.map((method) => vi.spyOn(Request.prototype, method));

  beforeAll(async () => {
    database = await openDatabase("sqlite");
    app = await filesApp(database, { storage, files: { maxBytes: 4 * 1024 * 1024 } })
      .openapi()
      .start();
    ada = await signUp(app, "ada@example.test");
  });
  // Before each test, not after: the sign-up in beforeAll reads its own (JSON) body.
  beforeEach(() => {
    stored.length = 0;
    for (const spy of spies) spy.mockClear();
  });
  afterAll(async () => {
    for (const spy of spies) spy.mockRestore();
    await app?.close();
    await database?.close();
  });

  for (const [surface, path, parts] of [
    ["/rpc", "/rpc/file/upload", [rpcEnvelope(), { name: "0", file: { size: SIZE } }]],
    ["/rest", "/rest/file/upload", [{ name: "file", file: { size: SIZE } }]],
  ] as const) {
    it(`${surface}: the body is never gathered, and storage receives the request's own chunks`, async () => {
      const body = multipartBody([...parts], { chunk: CHUNK });
      const response = await app.handle(streamedRequest(`${ORIGIN}${path}`, body, { cookie: ada.cookie, origin: ORIGIN }));
      expect(response.status).toBe(200);
      for (const [index, spy] of spies.entries()) expect(spy, `Request.prototype.${gathered[index]}`).not.toHaveBeenCalled();
      expect(stored.reduce((sum, chunk) => sum + chunk.byteLength, 0)).toBe(SIZE);
      const sent = new Set(body.chunks.map((chunk) => chunk.buffer));
      expect(stored.filter((chunk) => !sent.has(chunk.buffer as ArrayBuffer))).toHaveLength(0);
    });

    it(`${surface}: a refused upload reads the head and the file's first chunk, no more`, async () => {
      const body = multipartBody([...parts], { chunk: CHUNK });
      const response = await app.handle(streamedRequest(`${ORIGIN}${path}`, body, { origin: ORIGIN }));
      expect(response.status).toBe(401);
      // The file's first chunk, and the one the request stream's own queue pulls ahead of any reader.
      expect(body.pulled()).toBeLessThanOrEqual(1024 + 2 * CHUNK);
      expect(stored).toHaveLength(0);
    });
  }
});

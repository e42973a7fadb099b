/**
 * Downloads guarded by counting work, not time: a file the adapter holds in memory is answered as
 * one chunk (the stored bytes, not re-chunked copies), whole or by range.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryStorage } from "../../kernel/storage/index.js";
import { filesApp } from "../files/fixture.js";
import { multipartBody, rpcEnvelope, streamedRequest } from "../files/multipart-body.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";
import { openDatabase, type TestDatabase } from "../support/databases.js";

const SIZE = 3 * 1024 * 1024 + 5;

/** The response body's chunks, as a socket would write them. */
async function chunksOf(response: Response): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
  return chunks;
}

describe("work per download", () => {
  let database: TestDatabase;
  let app: Awaited<ReturnType<ReturnType<typeof filesApp>["start"]>>;
  let ada: SignedIn;
  let url: string;

  beforeAll(async () => {
    database = await openDatabase("sqlite");
    app = await filesApp(database, { storage: memoryStorage(), files: { maxBytes: 4 * 1024 * 1024 } }).start();
    ada = await signUp(app, "ada@example.test");
    const body = multipartBody([rpcEnvelope(), { name: "0", file: { size: SIZE } }], { chunk: 64 * 1024 });
    const response = await app.handle(streamedRequest(`${ORIGIN}/rpc/file/upload`, body, { cookie: ada.cookie, origin: ORIGIN }));
    expect(response.status).toBe(200);
    url = ((await response.json()) as { json: { url: string } }).json.url;
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  it("answers a file held in memory as one chunk, whole and by range", async () => {
    const whole = await app.handle(new Request(`${ORIGIN}${url}`, { headers: { cookie: ada.cookie } }));
    expect(whole.status).toBe(200);
    expect((await chunksOf(whole)).map((chunk) => chunk.byteLength)).toEqual([SIZE]);
    const range = await app.handle(new Request(`${ORIGIN}${url}`, { headers: { cookie: ada.cookie, range: "bytes=10-2097161" } }));
    expect(range.status).toBe(206);
    expect((await chunksOf(range)).map((chunk) => chunk.byteLength)).toEqual([2 * 1024 * 1024]);
  });
});

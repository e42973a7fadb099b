import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppStorage } from "../../kernel/index.js";
import { memoryStorage } from "../../kernel/storage/index.js";
import type { InferRouter } from "../../presets/trellis.js";
import { createClient } from "../../presets/client.js";
import { serve, type RunningServer } from "../../presets/node.js";
import { openDatabase, type TestDatabase } from "../support/databases.js";
import { signUp, type SignedIn } from "../support/auth.js";
import { startObjectStore, type ObjectStore } from "../support/object-store.js";
import { bytes, filesApp, uploadForm } from "./fixture.js";

describe("files over real HTTP (serve() on a free port), bytes in an S3-compatible store", () => {
  let database: TestDatabase;
  let objectStore: ObjectStore | undefined;
  let server: RunningServer;
  let ada: SignedIn;
  let storage: AppStorage;
  beforeAll(async () => {
    database = await openDatabase("sqlite");
    const started = await startObjectStore();
    if ("skipped" in started) console.log(`files over HTTP use memoryStorage: ${started.skipped}`);
    else objectStore = started;
    storage = objectStore?.storage ?? memoryStorage();
    server = await serve(filesApp(database, { storage }), { port: 0, hostname: "127.0.0.1", handleSignals: false });
    // On a loaded machine the event loop can stall past the client's keep-alive margin (Node closes
    // idle sockets after 5 s, fetch reuses them until 4 s): a reused socket closed meanwhile is an
    // ECONNRESET that has nothing to do with files.
    server.server.keepAliveTimeout = 60_000;
    ada = await signUp(server.app, "ada@example.test");
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await database?.close();
    await objectStore?.close();
  });

  it("uploads a File with the typed client and downloads the same bytes", async () => {
    const client = createClient<InferRouter<ReturnType<typeof filesApp>>>({ url: server.url, headers: { cookie: ada.cookie } });
    const record = await client.file.upload({ file: new File([bytes(300_000)], "clip.mp4", { type: "video/mp4" }) });
    expect(record).toMatchObject({ name: "clip.mp4", type: "video/mp4", size: 300_000, userId: ada.userId });
    expect(record.createdAt).toBeInstanceOf(Date);
    expect((await client.file.list({})).map((file) => file.id)).toContain(record.id);
    const response = await fetch(`${server.url}${record.url}`, { headers: { cookie: ada.cookie } });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-length")).toBe("300000");
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(bytes(300_000));
    const part = await fetch(`${server.url}${record.url}`, { headers: { cookie: ada.cookie, range: "bytes=1000-1999" } });
    expect(part.status).toBe(206);
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(bytes(300_000).subarray(1000, 2000));
    const gone = await client.file.delete({ id: record.id });
    expect(gone.id).toBe(record.id);
    expect((await fetch(`${server.url}${record.url}`, { headers: { cookie: ada.cookie } })).status).toBe(404);
  });

  it("takes a multipart body as curl -F sends it, and a chunked one, and refuses an oversized chunked one with 413", async () => {
    const form = uploadForm(new Blob([bytes(1234)], { type: "image/jpeg" }), "cat.jpg");
    const sent = await fetch(`${server.url}/rpc/file/upload`, { method: "POST", headers: { cookie: ada.cookie }, body: form });
    expect(sent.status).toBe(200);
    expect((await sent.json()).json).toMatchObject({ name: "cat.jpg", size: 1234 });

    const encoded = new Request("http://x", { method: "POST", body: uploadForm(new Blob([bytes(2 * 1024 * 1024)], { type: "image/jpeg" }), "big.jpg") });
    const chunked = await fetch(`${server.url}/rpc/file/upload`, {
      method: "POST",
      headers: { cookie: ada.cookie, "content-type": encoded.headers.get("content-type")! },
      body: encoded.body,
      duplex: "half",
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect((await chunked.json()).json).toMatchObject({ code: "PAYLOAD_TOO_LARGE" });
  });
});

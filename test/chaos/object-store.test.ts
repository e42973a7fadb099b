// The S3 server stopped under load: uploads and downloads answer 503 with a message that names the
// file storage (never a 500, never the database's message), no file row is left without its bytes,
// and both work again when the server is back, without restarting the app.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Logger } from "../../kernel/index.js";
import { serve, type RunningServer } from "../../presets/node.js";
import { openDatabase, type TestDatabase } from "../support/databases.js";
import { signUp, type SignedIn } from "../support/auth.js";
import { startObjectStore, type ObjectStore } from "../support/object-store.js";
import { bytes, filesApp, uploadForm } from "../files/fixture.js";
import { steadyLoad, waitUntil } from "./load.js";

describe("object store chaos", () => {
  let database: TestDatabase;
  let store: ObjectStore | undefined;
  let server: RunningServer;
  let ada: SignedIn;
  /** The app's own time for each upload it answered, from its request lines. */
  const uploads: { status: number; durationMs: number }[] = [];
  const record = (fields: object | string) => {
    const line = fields as { path?: string; status: number; durationMs: number };
    if (typeof fields === "object" && line.path?.endsWith("/file/upload")) uploads.push({ status: line.status, durationMs: line.durationMs });
  };
  const logger: Logger = { info: record, warn: record, error: record, child: () => logger };

  beforeAll(async () => {
    const started = await startObjectStore();
    if ("skipped" in started) return console.log(`skipping object store chaos: ${started.skipped}`);
    store = started;
    database = await openDatabase("sqlite");
    server = await serve(filesApp(database, { storage: store.storage, logger }), { port: 0, hostname: "127.0.0.1", handleSignals: false, banner: false });
    server.server.keepAliveTimeout = 60_000;
    ada = await signUp(server.app, "ada@example.test");
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await database?.close();
    await store?.close();
  });

  const upload = async (name: string) => {
    const response = await fetch(`${server.url}/rpc/file/upload`, { method: "POST", headers: { cookie: ada.cookie }, body: uploadForm(new Blob([bytes(2048)], { type: "image/png" }), name) });
    const body = await response.json();
    return { status: response.status, body: body.json ?? body };
  };
  const download = (id: string) => fetch(`${server.url}/files/${id}`, { headers: { cookie: ada.cookie } });
  const fileCount = async () => {
    const response = await fetch(`${server.url}/rpc/file/list`, { method: "POST", headers: { cookie: ada.cookie, "content-type": "application/json" }, body: JSON.stringify({ json: {} }) });
    return ((await response.json()).json as unknown[]).length;
  };

  it("stopped: uploads and downloads answer 503 naming the storage, no row without bytes, then recovery", async ({ skip }) => {
    if (!store) return skip("no S3-compatible server");
    const before = await upload("before.png");
    expect(before.status).toBe(200);
    const rows = await fileCount();
    // Steady mixed load (RPC creates and lists on a table) through the outage and the recovery.
    const load = steadyLoad(server.url, { table: "post", read: "rpc", workers: 2, pauseMs: 5, headers: { cookie: ada.cookie }, row: (n) => ({ title: `load ${n}` }) });
    await waitUntil(() => load.report.acknowledged.length > 5, 10_000, "the load warming up");

    await store.stop();
    uploads.length = 0;
    const uploadDown = await upload("while-down.png");
    // The app's time for it: the load's clients share this process, and the test's own request
    // waits on the same event loop, which a loaded machine stretches.
    expect(uploads).toHaveLength(1);
    const uploadMs = uploads[0]!.durationMs;
    const downloadDown = await download(before.body.id);
    const downloadBody = await downloadDown.json();
    console.log(`S3 down: upload ${uploadDown.status} in ${uploadMs} ms "${uploadDown.body.message}", download ${downloadDown.status} "${downloadBody.message}"`);
    expect(uploadDown.status).toBe(503);
    expect(uploadDown.body.message).toMatch(/file storage/i);
    expect(downloadDown.status).toBe(503);
    expect(downloadBody.message).toMatch(/file storage/i);
    expect(uploadMs).toBeLessThan(1000);
    // The failed upload left no row: the list still holds only the files whose bytes exist.
    expect(await fileCount()).toBe(rows);

    await store.start();
    const recovered = await waitUntil(async () => (await upload("after.png")).status === 200, 10_000, "uploads after the store came back");
    console.log(`S3 back: uploading again after ${recovered} ms`);
    const again = await download(before.body.id);
    expect(again.status).toBe(200);
    expect(new Uint8Array(await again.arrayBuffer())).toEqual(bytes(2048));
    const report = await load.stop();
    console.log(`database traffic through it: ${JSON.stringify(report.statuses)}`);
    // The store going away touches only file calls: the rest answers 200 throughout.
    expect(report.unexpected).toEqual([]);
    expect(report.statuses[503]).toBeUndefined();
  }, 90_000); // its named waits (10-30 s each) fail first; a loaded machine needs more than the default 30 s
});

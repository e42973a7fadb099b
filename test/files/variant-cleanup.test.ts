import { afterAll, describe, expect, it } from "vitest";
import sharp from "sharp";
import type { AppStorage } from "../../kernel/index.js";
import { memoryStorage } from "../../kernel/storage/index.js";
import { ORIGIN, signUp } from "../support/auth.js";
import { openDatabase } from "../support/databases.js";
import { startObjectStore, type ObjectStore } from "../support/object-store.js";
import { filesApp, uploadForm } from "./fixture.js";

/** The store as given, noting every key written to it, so a test can check each one is gone. */
function noting(inner: AppStorage): { storage: AppStorage; written: Set<string> } {
  const written = new Set<string>();
  const storage: AppStorage = {
    get: (key) => inner.get(key),
    set: (key, bytes) => (written.add(key), inner.set(key, bytes)),
    delete: (key) => inner.delete(key),
    getStream: inner.getStream && ((key, range) => inner.getStream!(key, range)),
    setStream: inner.setStream && ((key, body) => (written.add(key), inner.setStream!(key, body))),
  };
  return { storage, written };
}

const stores: Array<{ name: string; open(): Promise<{ storage: AppStorage; close(): Promise<void> } | { skipped: string }> }> = [
  { name: "memoryStorage", open: async () => ({ storage: memoryStorage(), close: async () => {} }) },
  {
    name: "an S3-compatible store (s3rver)",
    open: async () => {
      const started = await startObjectStore();
      return "skipped" in started ? started : { storage: (started as ObjectStore).storage, close: () => (started as ObjectStore).close() };
    },
  },
];

describe.each(stores)("deleting a file removes its cached variants on $name", ({ open }) => {
  const closing: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const close of closing.reverse()) await close();
  });

  it("including those made under variant settings that have since changed", async (test) => {
    const opened = await open();
    if ("skipped" in opened) return test.skip(opened.skipped);
    closing.push(opened.close);
    const { storage, written } = noting(opened.storage);
    const database = await openDatabase("sqlite");
    closing.push(() => database.close());
    // The same database and store before and after a deploy that changed the `card` variant.
    const before = await filesApp(database, { storage, files: { images: { variants: { card: { width: 120 } } } } }).start();
    closing.push(() => before.close());
    const ada = await signUp(before, "ada@example.test");
    const photo = await sharp({ create: { width: 400, height: 300, channels: 3, background: "#c83" } }).jpeg().toBuffer();
    const uploaded = await before.handle(new Request(`${ORIGIN}/rpc/file/upload`, { method: "POST", headers: { cookie: ada.cookie }, body: uploadForm(new Blob([photo], { type: "image/jpeg" }), "photo.jpg") }));
    const { id, url } = (await uploaded.json()).json;
    const variant = (app: typeof before, accept: string) => app.handle(new Request(`${ORIGIN}${url}?variant=card`, { headers: { cookie: ada.cookie, accept } }));
    for (const accept of ["image/webp", "image/jpeg"]) expect((await variant(before, accept)).status).toBe(200);

    const after = await filesApp(database, { storage, files: { images: { variants: { card: { width: 80 } } } } }).start();
    closing.push(() => after.close());
    expect((await variant(after, "image/webp")).status).toBe(200);
    // Two variants under the old settings and one under the new (and whatever lists them).
    expect([...written].filter((key) => key.includes("/variants/")).length).toBeGreaterThanOrEqual(3);

    const deleted = await after.handle(new Request(`${ORIGIN}/rpc/file/delete`, { method: "POST", headers: { cookie: ada.cookie, "content-type": "application/json" }, body: JSON.stringify({ json: { id } }) }));
    expect(deleted.status).toBe(200);
    const left = [];
    for (const key of written) if ((await opened.storage.get(key)) !== null) left.push(key);
    expect(left).toEqual([]);
    expect((await variant(after, "image/webp")).status).toBe(404);
  });
});

// A download that read the file's row just before `file.delete` committed, and its bytes just after
// the delete removed them, answered 500 and reported "has a row but no bytes in storage" to
// onError: the file was gone, not broken. Such a download now answers 404, as for any deleted file.
// Bytes missing under a row that still exists (memory storage across a restart) answer 410 with a
// message, not a 500, and are still reported to onError.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppStorage } from "../../kernel/index.js";
import { memoryStorage } from "../../kernel/storage/index.js";
import { openDatabase, type TestDatabase } from "../support/databases.js";
import { rpc } from "../support/app.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";
import { filesApp, upload, uploadForm } from "../files/fixture.js";

/** Memory storage whose next streamed read waits at `held` until released. */
function pausingStorage() {
  const inner = memoryStorage();
  const pause: { entered?: () => void; release?: Promise<void> } = {};
  const storage: AppStorage = {
    get: (key) => inner.get(key),
    set: (key, bytes) => inner.set(key, bytes),
    delete: (key) => inner.delete(key),
    setStream: (key, body) => inner.setStream!(key, body),
    async getStream(key, range) {
      if (pause.release) {
        const release = pause.release;
        pause.release = undefined;
        pause.entered?.();
        await release;
      }
      return inner.getStream!(key, range);
    },
  };
  return { storage, inner, pause };
}

describe("a download racing the file's delete", () => {
  let database: TestDatabase;
  let app: Awaited<ReturnType<ReturnType<typeof filesApp>["start"]>>;
  let ada: SignedIn;
  const store = pausingStorage();
  const errors: unknown[] = [];
  beforeAll(async () => {
    database = await openDatabase("sqlite");
    app = await filesApp(database, { storage: store.storage, onError: (error) => errors.push(error) }).start();
    ada = await signUp(app, "ada@example.test");
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  const paused = () => {
    let release!: () => void;
    const entered = new Promise<void>((resolve) => (store.pause.entered = resolve));
    store.pause.release = new Promise<void>((resolve) => (release = resolve));
    return { entered, release };
  };

  it("answers 404 once the delete committed, and reports nothing", async () => {
    const file = (await upload(app, uploadForm(new Blob(["hello"], { type: "text/plain" }), "a.txt"), { cookie: ada.cookie })).body;
    const gate = paused();
    const download = app.handle(new Request(`${ORIGIN}${file.url}`, { headers: { cookie: ada.cookie } }));
    await gate.entered;
    expect((await rpc(app, "file.delete", { id: file.id }, { cookie: ada.cookie })).status).toBe(200);
    gate.release();
    const response = await download;
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ code: "NOT_FOUND" });
    expect(errors).toEqual([]);
  });

  it("answers 410 with a message for bytes missing under a row that exists (a memory store that restarted), and reports it", async () => {
    errors.length = 0;
    const file = (await upload(app, uploadForm(new Blob(["hello"], { type: "text/plain" }), "b.txt"), { cookie: ada.cookie })).body;
    const row = await app.db.selectFrom("file").select("key").where("id", "=", file.id).executeTakeFirstOrThrow();
    await store.inner.delete(row.key);
    const response = await app.handle(new Request(`${ORIGIN}${file.url}`, { headers: { cookie: ada.cookie } }));
    expect(response.status).toBe(410);
    expect(await response.json()).toMatchObject({
      code: "FILES_BYTES_MISSING",
      message: `The file ${file.id} is listed but its contents are no longer stored; upload it again`,
    });
    expect(errors).toHaveLength(1);
    expect(String((errors[0] as Error).message)).toContain("has a row but no bytes in storage");
  });
});

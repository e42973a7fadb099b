import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createStorage } from "unstorage";
import fsDriver from "unstorage/drivers/fs";
import { schema } from "../../kernel/schema/index.js";
import { fromStore, memoryStorage } from "../../kernel/storage/index.js";
import type { AppStorage } from "../../kernel/index.js";
import { App } from "../../presets/trellis.js";
import { sqliteMemory } from "../support/app.js";
import { measure, print, type Stats } from "./measure.js";

/**
 * Files: upload and download of 1 MB and 10 MB through `handle()` (multipart in, bytes out) against
 * writing and reading the same bytes with the storage adapter directly; and the peak RSS growth
 * during a 10 MB upload. Run on the unstorage fs adapter (bytes on disk, as `npm start` keeps them)
 * and on the memory adapter (nothing but Trellis' own work on top of a copy).
 */

const model = schema("1").files({ owner: false }).build();
const ORIGIN = "http://localhost";

export async function run(): Promise<void> {
  const base = await mkdtemp(join(tmpdir(), "trellis-bench-files-"));
  try {
    // First, while no 10 MB buffer was ever allocated in this process.
    await memoryGrowth("fs adapter (unstorage)", fromStore(createStorage({ driver: fsDriver({ base }) })));
    await memoryGrowth("memory adapter (the stored copy counts)", memoryStorage());
    await suite("fs adapter (unstorage)", fromStore(createStorage({ driver: fsDriver({ base }) })), () => rm(base, { recursive: true, force: true }));
    await suite("memory adapter", memoryStorage(), async () => {});
  } finally {
    await rm(base, { recursive: true, force: true });
  }
}

function filesApp(storage: AppStorage) {
  return new App({ db: sqliteMemory(), storage, health: false })
    .schema(model)
    .files({ maxBytes: 16 * 1024 * 1024, permissions: { upload: "public", list: "public", get: "public", delete: "public" } })
    .start();
}

/**
 * The bytes a client sends for an upload, encoded once: what reaches `handle()` from a socket is
 * bytes with a declared length, so the benchmark does not time the client's own FormData encoding.
 */
async function encodedUpload(payload: Uint8Array<ArrayBuffer>): Promise<() => Request> {
  const form = new FormData();
  form.set("data", JSON.stringify({ json: { file: {} }, maps: [["file"]] }));
  form.set("0", new Blob([payload], { type: "application/octet-stream" }), "payload.bin");
  const encoded = new Request(`${ORIGIN}/rpc/file/upload`, { method: "POST", body: form });
  const headers = { "content-type": encoded.headers.get("content-type")! };
  const body = new Uint8Array(await encoded.arrayBuffer());
  return () => new Request(`${ORIGIN}/rpc/file/upload`, { method: "POST", body, headers: { ...headers, "content-length": String(body.byteLength) } });
}

async function suite(label: string, storage: AppStorage, clear: () => Promise<void>): Promise<void> {
  const app = await filesApp(storage);
  try {
    for (const [size, count] of [
      [1024 * 1024, 60],
      [10 * 1024 * 1024, 8],
    ] as const) {
      const payload = new Uint8Array(size).map((_, i) => (i * 31) & 0xff);
      const mb = `${size / 1024 / 1024} MB`;
      let n = 0;
      const uploadRequest = await encodedUpload(payload);
      const upload = async () => {
        const response = await app.handle(uploadRequest());
        if (response.status !== 200) throw new Error(`upload answered ${response.status}: ${await response.text()}`);
        return response.json();
      };
      const direct = () => storage.set(`bench/${n++}`, payload);
      const best = async (name: string, op: () => Promise<unknown>, clearAfter = true) => {
        let top: Stats | undefined;
        for (let round = 0; round < 2; round++) {
          const stats = await measure(name, op, { warmup: 3, count });
          if (clearAfter) await clear();
          if (!top || stats.perSecond > top.perSecond) top = stats;
        }
        return top!;
      };
      // What any Fetch server must do with the same request: parse the multipart body, read the file, store it.
      const handWritten = async () => {
        const file = (await uploadRequest().formData()).get("0") as File;
        await storage.set(`bench/${n++}`, new Uint8Array(await file.arrayBuffer()));
      };
      const uploads = [
        await best(`direct storage.set ${mb}`, direct),
        await best(`formData() + arrayBuffer + set ${mb}`, handWritten),
        await best(`file.upload through handle() ${mb}`, upload),
      ];
      print(`files, ${label}: upload ${mb}`, uploads, { of: `file.upload through handle() ${mb}`, to: `direct storage.set ${mb}`, target: size >= 10 * 1024 * 1024 ? 0.7 : 0 });
      console.log(`  ratio file.upload through handle() / formData() + arrayBuffer + set: ${(uploads[2]!.perSecond / uploads[1]!.perSecond).toFixed(2)} (what Trellis adds to the parsing any server does)`);

      const record = (await upload()) as { json: { url: string; id: string } };
      const key = (await app.db.selectFrom("file").select("key").where("id", "=", record.json.id).executeTakeFirstOrThrow()).key as string;
      const download = async () => {
        const response = await app.handle(new Request(`${ORIGIN}${record.json.url}`));
        if ((await response.arrayBuffer()).byteLength !== size) throw new Error("short download");
      };
      const read = () => storage.get(key);
      const downloads = [await best(`direct storage.get ${mb}`, read, false), await best(`GET /files/:id through handle() ${mb}`, download, false)];
      print(`files, ${label}: download ${mb}`, downloads, { of: `GET /files/:id through handle() ${mb}`, to: `direct storage.get ${mb}`, target: size >= 10 * 1024 * 1024 ? 0.7 : 0 });
      await clear();
    }
  } finally {
    await app.close();
  }
}

/**
 * Peak RSS above the level just before the first 10 MB upload of a fresh app (warmed up with a small
 * file, so the code paths are compiled but no 10 MB buffer was ever allocated and freed). The
 * encoded request bytes exist before the measure, as a socket's data would.
 */
async function memoryGrowth(label: string, storage: AppStorage): Promise<void> {
  const app = await filesApp(storage);
  try {
    const size = 10 * 1024 * 1024;
    const small = await encodedUpload(new Uint8Array(1024));
    for (let i = 0; i < 20; i++) await app.handle(small());
    const request = (await encodedUpload(new Uint8Array(size).map((_, i) => (i * 7) & 0xff)))();
    (globalThis as { gc?: () => void }).gc?.();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const before = process.memoryUsage().rss;
    let peak = before;
    const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 1);
    const response = await app.handle(request);
    await response.arrayBuffer();
    clearInterval(timer);
    peak = Math.max(peak, process.memoryUsage().rss);
    const growth = peak - before;
    const ratio = growth / size;
    console.log(`\n## files, ${label}: peak RSS growth during a 10 MB upload`);
    console.log(`  ${(growth / 1024 / 1024).toFixed(1)} MB = ${ratio.toFixed(2)}x the file (target < 3x) ${ratio < 3 ? "OK" : "ABOVE TARGET"}`);
  } finally {
    await app.close();
  }
}

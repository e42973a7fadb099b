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

/**
 * Files: upload and download of 1 MB and 10 MB through `handle()` (multipart in, bytes out) against
 * writing and reading the same bytes with the storage adapter directly; the peak RSS growth during a
 * 10 MB upload and download; and how much of a 200 MB upload against a 10 MB limit is read. Run on
 * the unstorage fs adapter (bytes on disk, as `npm start` keeps them) and on the memory adapter
 * (nothing but Trellis' own work on top of a copy).
 *
 * Requests carry their body as `serve()` hands it over: a stream of 64 KiB chunks with a declared
 * length. Responses are drained chunk by chunk, as a socket writes them, never gathered. Each path
 * and its baseline take turns op by op in this one process; the ratios are of median and of
 * fastest times, so a burst of load on a shared machine does not decide them.
 */

const model = schema("1").files({ owner: false }).build();
const ORIGIN = "http://localhost";
const SOCKET_CHUNK = 64 * 1024;

/** Bytes already received, as a socket's chunks: views, never copies. */
function socketStream(bytes: Uint8Array, onPull?: (length: number) => void): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.byteLength) return controller.close();
      const chunk = bytes.subarray(offset, offset + SOCKET_CHUNK);
      offset += chunk.byteLength;
      onPull?.(chunk.byteLength);
      controller.enqueue(chunk);
    },
  });
}

/** A response body read to its end a chunk at a time; its length. */
async function drain(body: ReadableStream<Uint8Array> | null): Promise<number> {
  if (!body) return 0;
  const reader = body.getReader();
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return length;
    length += value.byteLength;
  }
}

interface Timed {
  name: string;
  median: number;
  min: number;
  /** Median CPU time of an op (`process.cpuUsage()`, every thread of the process): steadier under load than wall time. */
  cpu: number;
}

/**
 * Each candidate timed op by op, taking turns (one op of each, then the next of each), so a burst
 * of load on a shared machine falls on all of them alike; the median and the fastest of all their
 * ops, and the median CPU time. `clear` runs every `count` turns (stored bytes removed), out of the
 * timing.
 */
async function interleaved(candidates: { name: string; op: () => Promise<unknown> }[], count: number, clear?: () => Promise<void>, rounds = 5): Promise<Timed[]> {
  const samples = candidates.map(() => [] as number[]);
  const cpu = candidates.map(() => [] as number[]);
  for (const { op } of candidates) for (let i = 0; i < 3; i++) await op();
  await clear?.();
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < count; i++) {
      for (const [index, { op }] of candidates.entries()) {
        const used = process.cpuUsage();
        const start = performance.now();
        await op();
        samples[index]!.push(performance.now() - start);
        const { user, system } = process.cpuUsage(used);
        cpu[index]!.push((user + system) / 1000);
      }
    }
    await clear?.();
  }
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  return candidates.map(({ name }, index) => {
    const sorted = samples[index]!.sort((a, b) => a - b);
    return { name, median: sorted[Math.floor(sorted.length / 2)]!, min: sorted[0]!, cpu: median(cpu[index]!) };
  });
}

/** The candidates' times, and the second's (through `handle()`) against the first's (the adapter directly) as a speed ratio. */
function printRatios(title: string, timed: Timed[], target: number): void {
  console.log(`\n## ${title}`);
  for (const t of timed) console.log(`  ${t.name.padEnd(44)} median ${t.median.toFixed(2).padStart(8)} ms   min ${t.min.toFixed(2).padStart(8)} ms   CPU median ${t.cpu.toFixed(2).padStart(7)} ms`);
  const [direct, through] = [timed[0]!, timed.find((t) => t.name.includes("handle()"))!];
  const median = direct.median / through.median;
  const min = direct.min / through.min;
  const cpu = direct.cpu / through.cpu;
  console.log(`  ratio ${through.name} / ${direct.name}: median ${median.toFixed(2)}, min ${min.toFixed(2)}, CPU ${cpu.toFixed(2)} (target >= ${target}) ${median >= target ? "OK" : "BELOW TARGET"}`);
}

export async function run(): Promise<void> {
  const base = await mkdtemp(join(tmpdir(), "trellis-bench-files-"));
  try {
    // First, while no 10 MB buffer was ever allocated in this process.
    await memoryGrowth("fs adapter (unstorage)", fromStore(createStorage({ driver: fsDriver({ base }) })));
    await memoryGrowth("memory adapter (the stored copy counts)", memoryStorage());
    await oversized(fromStore(createStorage({ driver: fsDriver({ base }) })));
    await suite("fs adapter (unstorage)", fromStore(createStorage({ driver: fsDriver({ base }) })));
    await suite("memory adapter", memoryStorage());
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
  const headers = { "content-type": encoded.headers.get("content-type")!, "content-length": "" };
  const body = new Uint8Array(await encoded.arrayBuffer());
  headers["content-length"] = String(body.byteLength);
  return () => new Request(`${ORIGIN}/rpc/file/upload`, { method: "POST", body: socketStream(body), headers, duplex: "half" } as RequestInit);
}

async function suite(label: string, storage: AppStorage): Promise<void> {
  const app = await filesApp(storage);
  /** Every key written so far (directly, or by an upload's row) removed, and the rows with them: no store grows round after round. */
  const written: string[] = [];
  const clear = async () => {
    const rows = await app.db.selectFrom("file").select("key").execute();
    for (const key of [...written.splice(0), ...rows.map((row) => row.key as string)]) await storage.delete(key);
    await app.db.deleteFrom("file").execute();
  };
  try {
    // 10 MB files are removed after every turn: the memory adapter holding twenty of them (200 MB) made
    // each garbage collection, and so each op that allocates, twice as slow (CPU per upload 15.8 ms against 7.2 ms).
    for (const [size, count, rounds] of [
      [1024 * 1024, 12, 5],
      [10 * 1024 * 1024, 1, 50],
    ] as const) {
      const payload = new Uint8Array(size).map((_, i) => (i * 31) & 0xff);
      const mb = `${size / 1024 / 1024} MB`;
      let n = 0;
      const newKey = () => {
        const key = `bench/${n++}`;
        written.push(key);
        return key;
      };
      const uploadRequest = await encodedUpload(payload);
      const upload = async () => {
        const response = await app.handle(uploadRequest());
        if (response.status !== 200) throw new Error(`upload answered ${response.status}: ${await response.text()}`);
        return response.json();
      };
      const direct = () => storage.set(newKey(), payload);
      // What any Fetch server must do with the same request: parse the multipart body, read the file, store it.
      const handWritten = async () => {
        const file = (await uploadRequest().formData()).get("0") as File;
        await storage.set(newKey(), new Uint8Array(await file.arrayBuffer()));
      };
      const target = size >= 10 * 1024 * 1024 ? 0.7 : 0;
      const uploads = await interleaved(
        [
          { name: `direct storage.set ${mb}`, op: direct },
          { name: `file.upload through handle() ${mb}`, op: upload },
        ],
        count,
        clear,
        rounds,
      );
      printRatios(`files, ${label}: upload ${mb}`, uploads, target);

      const record = (await upload()) as { json: { url: string; id: string } };
      const key = (await app.db.selectFrom("file").select("key").where("id", "=", record.json.id).executeTakeFirstOrThrow()).key as string;
      const download = async () => {
        const response = await app.handle(new Request(`${ORIGIN}${record.json.url}`));
        if ((await drain(response.body)) !== size) throw new Error("short download");
      };
      const downloads = await interleaved(
        [
          { name: `direct storage.get ${mb}`, op: () => storage.get(key) },
          { name: `GET /files/:id through handle() ${mb}`, op: download },
          { name: `direct storage.getStream drained ${mb}`, op: async () => drain(await storage.getStream!(key)) },
        ],
        count,
      );
      printRatios(`files, ${label}: download ${mb}`, downloads, target);
      // The platform's parser in a pass of its own, after the others: the garbage its copies leave is
      // collected during whichever op comes next, which charged it to the upload in a shared pass.
      const parsers = await interleaved(
        [
          { name: `formData() + arrayBuffer + set ${mb}`, op: handWritten },
          { name: `file.upload through handle() ${mb}`, op: upload },
        ],
        count,
        clear,
        Math.ceil(rounds / 2),
      );
      console.log(`  formData() + arrayBuffer + set ${mb}: median ${parsers[0]!.median.toFixed(2)} ms, CPU median ${parsers[0]!.cpu.toFixed(2)} ms, in a pass of its own beside uploads (CPU median ${parsers[1]!.cpu.toFixed(2)} ms)`);
      console.log(`  ratio file.upload through handle() / formData() + arrayBuffer + set (medians): ${(parsers[0]!.median / parsers[1]!.median).toFixed(2)} (what Trellis adds to the parsing any server does)`);
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
    const record = (await response.json()) as { json: { url: string } };
    clearInterval(timer);
    peak = Math.max(peak, process.memoryUsage().rss);
    const growth = peak - before;
    const ratio = growth / size;
    console.log(`\n## files, ${label}: peak RSS growth during a 10 MB upload, then a 10 MB download`);
    console.log(`  upload:   ${(growth / 1024 / 1024).toFixed(1)} MB = ${ratio.toFixed(2)}x the file (target < 1.5x) ${ratio < 1.5 ? "OK" : "ABOVE TARGET"}`);
    (globalThis as { gc?: () => void }).gc?.();
    const beforeDownload = process.memoryUsage().rss;
    let downloadPeak = beforeDownload;
    const sampler = setInterval(() => (downloadPeak = Math.max(downloadPeak, process.memoryUsage().rss)), 1);
    await drain((await app.handle(new Request(`${ORIGIN}${record.json.url}`))).body);
    clearInterval(sampler);
    downloadPeak = Math.max(downloadPeak, process.memoryUsage().rss);
    const downloadRatio = (downloadPeak - beforeDownload) / size;
    console.log(`  download: ${((downloadPeak - beforeDownload) / 1024 / 1024).toFixed(1)} MB = ${downloadRatio.toFixed(2)}x the file (target < 1.5x) ${downloadRatio < 1.5 ? "OK" : "ABOVE TARGET"}`);
  } finally {
    await app.close();
  }
}

/**
 * A 200 MB upload against a 10 MB limit, generated as it is read: with a declared length (refused
 * before the body is read) and chunked (counted as it arrives). Target: at most the limit plus one
 * chunk read past the route's allowance.
 */
async function oversized(storage: AppStorage): Promise<void> {
  const limit = 10 * 1024 * 1024;
  const app = await new App({ db: sqliteMemory(), storage, health: false })
    .schema(model)
    .files({ maxBytes: limit, permissions: { upload: "public", list: "public", get: "public", delete: "public" } })
    .start();
  try {
    console.log("\n## files: a 200 MB upload against a 10 MB limit");
    const total = 200 * 1024 * 1024;
    const boundary = "----trellis-bench";
    const head = new TextEncoder().encode(
      `--${boundary}\r\nContent-Disposition: form-data; name="data"\r\n\r\n{"json":{"file":{}},"maps":[["file"]]}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="0"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    );
    const allowance = limit + 64 * 1024; // the route's body limit: maxBytes plus the envelope
    for (const [label, headers] of [
      ["declared Content-Length", { "content-length": String(total + head.byteLength) }],
      ["chunked", { "transfer-encoding": "chunked" }],
    ] as const) {
      let read = 0;
      const filler = new Uint8Array(SOCKET_CHUNK).fill(7);
      let sentHead = false;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          const chunk = sentHead ? filler : head;
          sentHead = true;
          read += chunk.byteLength;
          if (read > total) return controller.close();
          controller.enqueue(chunk);
        },
      });
      const response = await app.handle(
        new Request(`${ORIGIN}/rpc/file/upload`, { method: "POST", body, headers: { ...headers, "content-type": `multipart/form-data; boundary=${boundary}` }, duplex: "half" } as RequestInit),
      );
      const ok = response.status === 413 && read <= allowance + SOCKET_CHUNK;
      console.log(`  ${label.padEnd(24)} ${response.status}, read ${(read / 1024 / 1024).toFixed(2)} MB (target: 413 after at most ${((allowance + SOCKET_CHUNK) / 1024 / 1024).toFixed(2)} MB) ${ok ? "OK" : "ABOVE TARGET"}`);
    }
  } finally {
    await app.close();
  }
}

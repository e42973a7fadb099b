import { fork } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import sharp from "sharp";
import { schema } from "../../kernel/schema/index.js";
import { memoryStorage } from "../../kernel/storage/index.js";
import { memorySecrets } from "../../kernel/secrets/index.js";
import { App } from "../../presets/trellis.js";
import { sqliteMemory } from "../support/app.js";

/**
 * Images: a variant made through `GET /files/:id` (a signed ad-hoc size, made on every request)
 * against sharp called directly with the same settings on the same bytes; a cached variant served
 * against a plain download of a file of the same size; and the peak RSS while 8 large images
 * transform at once (concurrency 8, then the default 2 with the rest queued), in child processes. Candidates take turns
 * op by op; ratios are of medians.
 */

const model = schema("1").files({ owner: false }).build();
const ORIGIN = "http://localhost";
const KEY = "bench-signing-key-0123456789-abcdefghijkl";
const everyone = { upload: "public", list: "public", get: "public", delete: "public" } as const;

function imagesApp(concurrency: number) {
  return new App({ db: sqliteMemory(), storage: memoryStorage(), secrets: memorySecrets({ FILES_SIGNING_KEY: KEY }), health: false, baseUrl: ORIGIN })
    .schema(model)
    .files({ maxBytes: 64 * 1024 * 1024, permissions: everyone, images: { variants: { card: { width: 720 } }, concurrency, queue: 64 } })
    .start();
}

/** A photo-like JPEG: noise over a gradient, so the encoder has real work (a flat colour compresses to nothing). */
async function photo(width: number, height: number): Promise<Uint8Array> {
  const raw = Buffer.alloc(width * height * 3);
  let x = 7;
  for (let i = 0; i < raw.length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    raw[i] = (((i / 3) % width) * 200) / width + (x >>> 27);
  }
  return new Uint8Array(await sharp(raw, { raw: { width, height, channels: 3 } }).jpeg({ quality: 85 }).toBuffer());
}

async function upload(app: Awaited<ReturnType<typeof imagesApp>>, bytes: Uint8Array, name: string, type: string): Promise<{ id: string; url: string }> {
  const form = new FormData();
  form.set("data", JSON.stringify({ json: { file: {} }, maps: [["file"]] }));
  form.set("0", new Blob([bytes as BlobPart], { type }), name);
  const response = await app.handle(new Request(`${ORIGIN}/rpc/file/upload`, { method: "POST", body: form }));
  if (response.status !== 200) throw new Error(`upload answered ${response.status}: ${await response.text()}`);
  return (await response.json()).json;
}

async function fetched(app: Awaited<ReturnType<typeof imagesApp>>, url: string, accept = "image/jpeg"): Promise<Uint8Array> {
  const response = await app.handle(new Request(new URL(url, ORIGIN), { headers: { accept } }));
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${await response.text()}`);
  return new Uint8Array(await response.arrayBuffer());
}

interface Timed {
  name: string;
  median: number;
  min: number;
  /** Median CPU time of an op, every thread of the process (sharp's included): steadier than wall time on a loaded machine. */
  cpu: number;
}

async function turns(candidates: { name: string; op: () => Promise<unknown> }[], count: number): Promise<Timed[]> {
  const samples = candidates.map(() => [] as number[]);
  const cpu = candidates.map(() => [] as number[]);
  for (const { op } of candidates) for (let i = 0; i < 3; i++) await op();
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
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  return candidates.map(({ name }, index) => ({ name, median: median(samples[index]!), min: Math.min(...samples[index]!), cpu: median(cpu[index]!) }));
}

function report(title: string, timed: Timed[], target: number): void {
  console.log(`\n## ${title}`);
  for (const t of timed) console.log(`  ${t.name.padEnd(60)} median ${t.median.toFixed(2).padStart(8)} ms   min ${t.min.toFixed(2).padStart(8)} ms   CPU median ${t.cpu.toFixed(2).padStart(7)} ms`);
  const [direct, through] = timed as [Timed, Timed];
  const ratio = direct.median / through.median;
  console.log(`  ratio (speed): median ${ratio.toFixed(2)}, min ${(direct.min / through.min).toFixed(2)}, CPU ${(direct.cpu / through.cpu).toFixed(2)} (target >= ${target}) ${ratio >= target ? "OK" : "BELOW TARGET"}`);
}

export const cases = { variants: () => variants(), rss: () => peakRss() };

export async function run(): Promise<void> {
  await variants();
  await peakRss();
}

/** Variants made through the app against sharp directly, and a cached variant against a plain download. */
async function variants(): Promise<void> {
  const app = await imagesApp(2);
  try {
    const bytes = await photo(2725, 2225);
    const file = await upload(app, bytes, "photo.jpg", "image/jpeg");
    const files = app.sealed.service("files")!;
    // An ad-hoc size is never stored: each request makes the variant again.
    const signed = files.sign(file.id, { expiresIn: 3600, variant: { width: 720 } });
    const direct = () => sharp(bytes).autoOrient().resize({ width: 720, fit: "inside", withoutEnlargement: true }).jpeg({ quality: 80, mozjpeg: false }).toBuffer();
    report("images: 2725 x 2225 JPEG to 720 wide JPEG", await turns([{ name: "sharp directly", op: direct }, { name: "GET /files/:id?w=720 (signed) through handle()", op: () => fetched(app, signed) }], 40), 0.9);
    const webp = () => sharp(bytes).autoOrient().resize({ width: 720, fit: "inside", withoutEnlargement: true }).webp({ quality: 80 }).toBuffer();
    report("images: the same, to WebP by Accept", await turns([{ name: "sharp directly", op: webp }, { name: "GET /files/:id?w=720 (signed, Accept WebP) through handle()", op: () => fetched(app, signed, "image/webp") }], 40), 0.9);

    // A cached variant against a plain download of a file of exactly its size.
    const variant = await fetched(app, `${file.url}?variant=card`);
    const plain = await upload(app, variant, "same-size.bin", "application/octet-stream");
    report(
      `images: cached variant (${variant.byteLength} bytes) against a plain download of the same size`,
      await turns([{ name: "GET /files/:id (plain file)", op: () => fetched(app, plain.url) }, { name: "GET /files/:id?variant=card (cached)", op: () => fetched(app, `${file.url}?variant=card`) }], 2000),
      0.95,
    );
  } finally {
    await app.close();
  }
}

/**
 * Peak RSS growth while 8 large images are asked for at once, each run in a child process (its
 * memory the app's alone): a 6000 x 4000 JPEG (libvips decodes JPEG shrunk on load) and a
 * 4000 x 3000 PNG (decoded whole), at concurrency 8 and at the default 2.
 */
async function peakRss(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "trellis-bench-images-"));
  try {
    const jpeg = join(dir, "large.jpg");
    const png = join(dir, "large.png");
    await writeFile(jpeg, await photo(6000, 4000));
    await writeFile(png, await sharp(await photo(4000, 3000)).png({ compressionLevel: 1 }).toBuffer());
    for (const [label, path, type] of [["6000 x 4000 JPEG", jpeg, "image/jpeg"], ["4000 x 3000 PNG", png, "image/png"]] as const) {
      console.log(`\n## images: 8 x ${label} to 720 wide at once, peak RSS`);
      for (const concurrency of [8, 2]) {
        const child = fork(fileURLToPath(new URL("./images-child.ts", import.meta.url)), [path, String(concurrency), type], { execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
        await new Promise<void>((resolve, reject) => child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`images-child exited with ${code}`)))));
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

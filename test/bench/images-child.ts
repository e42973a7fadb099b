/**
 * The images benchmark's peak-RSS run, in a process of its own so its resident memory holds only
 * the app and the stored originals: uploads 8 copies of the image at argv[2], then asks for a
 * variant of each at once (concurrency argv[3]) and prints the RSS growth over the baseline.
 */
import { readFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { schema } from "../../kernel/schema/index.js";
import { memoryStorage } from "../../kernel/storage/index.js";
import { App } from "../../presets/trellis.js";
import { sqliteMemory } from "../support/app.js";

const [path, concurrency, type] = process.argv.slice(2) as [string, string, string];
const bytes = new Uint8Array(readFileSync(path));
const app = await new App({ db: sqliteMemory(), storage: memoryStorage(), health: false })
  .schema(schema("1").files({ owner: false }).build())
  .files({ maxBytes: 128 * 1024 * 1024, permissions: { upload: "public", list: "public", get: "public", delete: "public" }, images: { variants: { card: { width: 720 } }, concurrency: Number(concurrency), queue: 64, placeholder: false } })
  .start();
const urls: string[] = [];
for (let i = 0; i < 8; i++) {
  const form = new FormData();
  form.set("data", JSON.stringify({ json: { file: {} }, maps: [["file"]] }));
  form.set("0", new Blob([bytes], { type }), `large-${i}`);
  const response = await app.handle(new Request("http://localhost/rpc/file/upload", { method: "POST", body: form }));
  urls.push((await response.json()).json.url);
}
// sharp and libvips loaded, and their threads started, before the baseline.
await app.handle(new Request(`http://localhost${urls[0]}?variant=card`, { headers: { accept: "image/webp" } }));
await new Promise((resolve) => setTimeout(resolve, 200));
const before = process.memoryUsage.rss();
let peak = before;
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 2);
const delay = monitorEventLoopDelay({ resolution: 5 });
delay.enable();
const start = performance.now();
const statuses = await Promise.all(urls.map(async (url) => (await app.handle(new Request(`http://localhost${url}?variant=card`, { headers: { accept: "image/jpeg" } }))).status));
const elapsed = performance.now() - start;
delay.disable();
clearInterval(sampler);
peak = Math.max(peak, process.memoryUsage.rss());
const mb = (value: number) => (value / 1024 / 1024).toFixed(0);
console.log(`  concurrency ${concurrency}: RSS before ${mb(before)} MB, peak ${mb(peak)} MB, growth ${mb(peak - before)} MB; 8 variants in ${elapsed.toFixed(0)} ms (statuses ${[...new Set(statuses)].join(", ")}); event-loop delay p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms, max ${(delay.max / 1e6).toFixed(1)} ms`);
await app.close();

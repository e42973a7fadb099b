/** Runs in a fresh process so resident memory is the app's alone. Prints one JSON line. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { embedded } from "../../kernel/embedded/index.js";
import { createBlog } from "../../examples/blog/app.js";

const rssBefore = process.memoryUsage().rss;
const dir = mkdtempSync(join(tmpdir(), "trellis-bench-"));
let t = performance.now();
const app = await createBlog(embedded({ dataDir: join(dir, "data") })).start();
const firstStart = performance.now() - t;
await (await app.handle(new Request("http://localhost/health"))).text();
const rssAfterStart = process.memoryUsage().rss;
await app.close();

t = performance.now();
const reopened = await createBlog(embedded({ dataDir: join(dir, "data") })).start();
const reopenStart = performance.now() - t;
await reopened.close();

t = performance.now();
const cold = embedded({ dataDir: "memory://" });
await cold.ready();
const coldMemory = performance.now() - t;
const warm: number[] = [];
for (let i = 0; i < 3; i++) {
  t = performance.now();
  const db = embedded({ dataDir: "memory://" });
  await db.ready();
  warm.push(performance.now() - t);
  await db.close();
}
await cold.close();
rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify({ rssBefore, rssAfterStart, firstStart, reopenStart, coldMemory, warm }));

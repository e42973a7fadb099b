/**
 * The memory benchmark's server: the blog example on the embedded database, in a process of its
 * own so its resident memory is the app's alone. Sends `{ url }` once listening, then answers each
 * `"rss"` message with its memory figures.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { embedded } from "../../kernel/embedded/index.js";
import { serve } from "../../presets/node.js";
import { createBlog } from "../../examples/blog/app.js";

const dir = mkdtempSync(join(tmpdir(), "trellis-memory-"));
const app = createBlog(embedded({ dataDir: join(dir, "data") }), { baseUrl: "http://127.0.0.1", onError: () => {}, logger: false });
const server = await serve(app, { port: 0, hostname: "127.0.0.1", handleSignals: false, banner: false });
const signUp = await fetch(`${server.url}/api/auth/sign-up/email`, {
  method: "POST",
  headers: { "content-type": "application/json", origin: "http://127.0.0.1" },
  body: JSON.stringify({ email: "memory@example.com", password: "correct-horse-battery-staple", name: "Memory" }),
});
const { user } = (await signUp.json()) as { user: { id: string } };
const cookie = signUp.headers.getSetCookie().map((line) => line.split(";")[0]).join("; ");
const db = server.app.db as any;
await db
  .insertInto("post")
  .values(Array.from({ length: 200 }, (_, i) => ({ title: `post ${i}`, body: "text ".repeat(40), status: "published", authorId: user.id })))
  .execute();

process.on("message", async (message) => {
  if (message === "rss") {
    // With MEMORY_GC=1 (node --expose-gc) the figures are of what is retained, after a full collection.
    (globalThis as { gc?: () => void }).gc?.();
    const usage = process.memoryUsage();
    process.send!({ rss: usage.rss, heapUsed: usage.heapUsed, heapTotal: usage.heapTotal, external: usage.external, arrayBuffers: usage.arrayBuffers });
  } else if (message === "stop") {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  }
});
process.send!({ url: server.url, cookie });

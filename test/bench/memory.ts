/**
 * `npm run bench -- memory`: resident memory of the blog example on the embedded database, served
 * over HTTP from a process of its own: after start, after 20,000 requests, and its growth over a
 * steady load after that warm-up (30 s by default; `MEMORY_SECONDS=120` for the 2-minute run).
 * The server is compiled first and run by plain Node, as `npm start` runs the example: a
 * TypeScript loader in the process would add its own 100 MB (docs/operations.md), and with the
 * same Node flags. `MEMORY_GC=1` collects garbage before each sample (what is retained).
 */
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { build } from "tsup";

const SECONDS = Number(process.env.MEMORY_SECONDS ?? 30);
const IDLE_SECONDS = 10;
/** What `npm start` runs the example with (package.json); `MEMORY_NODE_FLAGS` replaces them. */
const NPM_START_FLAGS = "--max-old-space-size=192";
const LIMIT_MB = 300;
const GROWTH_GOAL = 0.05;

interface Usage {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
}

function ask(child: ChildProcess): Promise<Usage> {
  return new Promise((resolve) => {
    child.once("message", (message) => resolve(message as Usage));
    child.send("rss");
  });
}

/** The requests a visitor makes: the home route, health, lists and reads, signed out and in. */
function requests(cookie: string): autocannon.Request[] {
  const rpc = (path: string, input: unknown, headers: Record<string, string> = {}) => ({
    method: "POST" as const,
    path,
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ json: input }),
  });
  return [
    { method: "GET", path: "/" },
    { method: "GET", path: "/health" },
    rpc("/rpc/post/list", { take: 20, include: { comments: true } }),
    rpc("/rpc/post/get", { where: { id: 7 } }),
    rpc("/rpc/post/list", { take: 10 }, { cookie, origin: "http://127.0.0.1" }),
    rpc("/rpc/me", undefined, { cookie, origin: "http://127.0.0.1" }),
  ];
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const detail = (u: Usage) => `(JS heap ${mb(u.heapUsed)} of ${mb(u.heapTotal)}, external ${mb(u.external)}, array buffers ${mb(u.arrayBuffers)})`;

export async function run(): Promise<void> {
  const outDir = fileURLToPath(new URL("../../.app/bench", import.meta.url));
  await build({ entry: {
      "memory-child": fileURLToPath(new URL("./memory-child.ts", import.meta.url)),
      // The embedded database thread's module, beside the bundle as the package ships it.
      "embedded-thread": fileURLToPath(new URL("../../kernel/embedded/worker/thread.ts", import.meta.url)),
    }, outDir, format: ["esm"], target: "node20", silent: true, config: false });
  const child = fork(`${outDir}/memory-child.js`, [], { execArgv: [...(process.env.MEMORY_GC ? ["--expose-gc"] : []), ...(process.env.MEMORY_NODE_FLAGS ?? NPM_START_FLAGS).split(" ").filter(Boolean)], env: { ...process.env, ...(process.env.MEMORY_ARENAS ? { MALLOC_ARENA_MAX: process.env.MEMORY_ARENAS } : {}) }, stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const { url, cookie } = await new Promise<{ url: string; cookie: string }>((resolve, reject) => {
    child.once("message", (message) => resolve(message as { url: string; cookie: string }));
    child.once("exit", (code) => reject(new Error(`the server exited with ${code}`)));
  });
  try {
    const started = await ask(child);
    const load = await autocannon({ url, connections: 8, amount: 20_000, requests: requests(cookie) });
    const afterLoad = await ask(child);
    // Steady load: RSS sampled once the warm-up above is done, then at the end.
    const steady = await autocannon({ url, connections: 4, duration: SECONDS, requests: requests(cookie) });
    const afterSteady = await ask(child);
    // V8 gives back heap it grew for a burst once the process is idle (its memory reducer).
    await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
    const idle = await ask(child);
    const growth = (afterSteady.rss - afterLoad.rss) / afterLoad.rss;
    const errors = load.non2xx + load.errors + steady.non2xx + steady.errors;
    console.log(`\n## memory: the blog example on the embedded database, resident set of the server process`);
    console.log(`  after start()                ${mb(started.rss).padStart(7)}  ${detail(started)}  (target <= ${LIMIT_MB} MB: ${started.rss <= LIMIT_MB * 1024 * 1024 ? "OK" : "ABOVE"})`);
    console.log(`  after 20,000 requests        ${mb(afterLoad.rss).padStart(7)}  ${detail(afterLoad)}`);
    console.log(`  after ${String(SECONDS).padStart(3)} s steady load      ${mb(afterSteady.rss).padStart(7)}  ${detail(afterSteady)}  (${steady.requests.total} requests)`);
    console.log(`  after ${IDLE_SECONDS} s idle              ${mb(idle.rss).padStart(7)}  ${detail(idle)}`);
    console.log(`  growth over the steady load  ${(growth * 100).toFixed(1).padStart(6)} %  (goal < ${GROWTH_GOAL * 100} %: ${growth < GROWTH_GOAL ? "OK" : "ABOVE"})`);
    if (errors > 0) console.log(`  (${errors} non-2xx answers or errors during the load)`);
  } finally {
    child.send("stop");
    await new Promise((resolve) => child.once("exit", resolve));
  }
}

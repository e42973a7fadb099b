/**
 * 1,000 distinct live subscriptions, the realistic case: each signed-in user watches their own
 * owner-scoped list over SSE through `serve()`, and one write changes one user's row. Measured at
 * 1, 100 and 1,000 open subscriptions: the time from the write's start (its commit included) to
 * that user's snapshot arriving over HTTP, the statements the app ran for it (the write included,
 * counted by the kernel's statement observer), and the process CPU per write (request thread and
 * database thread; the SSE clients share the process, so their parsing of the one snapshot counts).
 * The baseline, in the same run: the same write without `RETURNING`, which names no rows, so every
 * query on the table re-runs, as every write did before matching.
 *
 * Users sign up through `/api/auth` (real users, real sessions and cookies) with a trivial password
 * hash, so 1,000 sign-ups take seconds rather than 1,000 scrypt runs. Streams are opened with
 * `revalidateMs: false`: the periodic session checks (1,000 per `revalidateMs`) are not the write's
 * work; they are the same with or without matching.
 */
import { setMaxListeners } from "node:events";
import { definePlugin } from "../../kernel/index.js";
import { embedded } from "../../kernel/embedded/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { createClient } from "../../presets/client.js";
import { serve } from "../../presets/node.js";

const ORIGIN = "http://127.0.0.1";
const SECRET = "bench-secret-bench-secret-bench-secret-1234";
const USERS = 1000;
const WRITES = 100;
const v1 = schema("1")
  .auth()
  .table("todo", (t) => ({ id: t.serial().primaryKey(), ownerId: t.text(), title: t.text() }))
  .build();

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
}

const cookieOf = (response: Response) =>
  response.headers
    .getSetCookie()
    .map((line) => line.split(";")[0])
    .join("; ");

export async function distinct(): Promise<void> {
  console.log("\n## live: distinct owner-scoped subscriptions over SSE through serve(), one write to one user's row (target p99 < 100 ms at 1,000, a handful of statements)");
  let statements = 0;
  const counter = definePlugin({
    name: "bench-statements",
    build: (ctx) => ctx.need("instrumentation").add({ statement: (_text, run) => (statements++, run()) }),
  });
  const app = new App({ db: embedded({ dataDir: "memory://" }), baseUrl: ORIGIN, onError: () => {} })
    .schema(v1)
    .auth({
      secret: SECRET,
      emailAndPassword: { enabled: true, password: { hash: async (password) => `plain:${password}`, verify: async ({ hash, password }) => hash === `plain:${password}` } },
    })
    .use(counter)
    .resource("todo", {
      ownerColumn: "ownerId",
      permissions: { list: "owner", create: "authenticated", update: "owner" },
      live: { max: USERS, maxPerCaller: 1, revalidateMs: false },
    });
  const server = await serve(app, { port: 0, hostname: "127.0.0.1", handleSignals: false, banner: false });
  const built = server.app as any;
  try {
    const started = performance.now();
    const users: { id: string; cookie: string }[] = [];
    for (let i = 0; i < USERS; i += 25) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(25, USERS - i) }, async (_, j) => {
          const response = await built.handle(
            new Request(`${ORIGIN}/api/auth/sign-up/email`, {
              method: "POST",
              headers: { "content-type": "application/json", origin: ORIGIN },
              body: JSON.stringify({ email: `user${i + j}@bench.test`, password: "correct-horse-battery-staple", name: `user${i + j}` }),
            }),
          );
          if (response.status !== 200) throw new Error(`sign-up failed: ${response.status} ${await response.text()}`);
          return { id: ((await response.json()) as { user: { id: string } }).user.id, cookie: cookieOf(response) };
        }),
      );
      users.push(...batch);
    }
    await built.db
      .insertInto("todo")
      .values(users.map((user) => ({ ownerId: user.id, title: "first" })))
      .execute();
    console.log(`  setup: ${USERS} users signed up, each with one row, in ${((performance.now() - started) / 1000).toFixed(1)} s`);

    const baseline: { cpu?: number } = {};
    for (const n of [1, 100, 1000]) {
      const controller = new AbortController();
      setMaxListeners(0, controller.signal);
      const waiting = new Map<number, { title: string; resolve: () => void }>();
      const open = async (i: number) => {
        const client = createClient<any>({ url: server.url, headers: { cookie: users[i]!.cookie } }) as any;
        const stream = await client.todo.live({}, { signal: controller.signal });
        const first = await stream.next();
        if (first.value?.[0]?.ownerId !== users[i]!.id) throw new Error("a stream did not start with its owner's row");
        void (async () => {
          try {
            for await (const rows of stream) {
              const wanted = waiting.get(i);
              if (wanted && rows[0]?.title === wanted.title) wanted.resolve();
            }
          } catch {
            // Aborted at the end of the round.
          }
        })();
      };
      for (let i = 0; i < n; i += 20) await Promise.all(Array.from({ length: Math.min(20, n - i) }, (_, j) => open(i + j)));
      const stats = built.sealed.liveStats();
      if (stats.queries !== n) throw new Error(`expected ${n} distinct live queries, found ${stats.queries}`);
      await new Promise((resolve) => setTimeout(resolve, 300));

      /** One write to user `i`'s row; with `returning` its rows are matched, without it every query on the table re-runs (the behaviour before matching). */
      const write = async (w: number, returning: boolean) => {
        const i = (w * 37) % n;
        const title = `n${n}-${returning ? "m" : "a"}${w}`;
        const delivered = new Promise<void>((resolve, reject) => {
          waiting.set(i, { title, resolve });
          setTimeout(() => reject(new Error(`no snapshot for user ${i} within 60 s`)), 60_000).unref();
        });
        const before = statements;
        const usage = process.cpuUsage();
        const t0 = performance.now();
        const update = built.db.updateTable("todo").set({ title }).where("ownerId", "=", users[i]!.id);
        await (returning ? update.returningAll() : update).execute();
        await delivered;
        const latency = performance.now() - t0;
        // Until the statements stop: everything the write set off has run.
        for (let seen = -1; seen !== statements; ) {
          seen = statements;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        const spent = process.cpuUsage(usage);
        waiting.delete(i);
        return { latency, statements: statements - before, cpu: (spent.user + spent.system) / 1000 };
      };
      const measure = async (writes: number, returning: boolean) => {
        const samples = [];
        for (let w = 0; w < writes; w++) samples.push(await write(w, returning));
        const latencies = samples.map((sample) => sample.latency);
        return {
          p50: percentile(latencies, 0.5),
          p99: percentile(latencies, 0.99),
          statements: samples.reduce((sum, sample) => sum + sample.statements, 0) / writes,
          cpu: samples.reduce((sum, sample) => sum + sample.cpu, 0) / writes,
        };
      };
      const matched = await measure(WRITES, true);
      baseline.cpu ??= matched.cpu;
      console.log(
        `  ${String(n).padStart(4)} subscriptions: p50 ${matched.p50.toFixed(1)} ms, p99 ${matched.p99.toFixed(1)} ms; ` +
          `statements per write ${matched.statements.toFixed(1)} (the write included); CPU per write ${matched.cpu.toFixed(2)} ms (${(matched.cpu / baseline.cpu).toFixed(2)}x of 1 subscription)`,
      );
      if (n > 1) {
        // The same write without RETURNING names no rows: every query re-runs, as before matching.
        const all = await measure(n >= 1000 ? 3 : 10, false);
        console.log(
          `        every query re-run (no RETURNING): p50 ${all.p50.toFixed(1)} ms; statements per write ${all.statements.toFixed(1)}; ` +
            `CPU per write ${all.cpu.toFixed(2)} ms (matching: ${(all.cpu / matched.cpu).toFixed(1)}x less CPU, ${(all.p50 / matched.p50).toFixed(1)}x lower p50)`,
        );
      }
      controller.abort();
      // Until the server has seen every stream end: each user's one slot is free for the next round.
      while (built.sealed.liveStats().queries > 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await server.close();
  }
}

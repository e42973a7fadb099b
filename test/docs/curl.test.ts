import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, it, type ExpectStatic } from "vitest";
import { codeBlocks, markdownPages } from "./markdown.js";
import { buildBlog, serveBuiltBlog, type StartedBlog } from "../support/npm-start.js";

/**
 * Every `curl` sample of README.md, docs/ and the examples' READMEs runs, in page order, against
 * the blog as `npm start` serves it (built once, embedded database in memory). One blog serves every
 * page: README.md and then examples/blog/README.md in that order (a newcomer follows them on a fresh
 * start), each other page at the same time as them. Pages keep out of each other's way as users of
 * one blog do: each signs up addresses of its own (checked below), has its own cookie jar and
 * variables, and states nothing about rows another page may have written.
 * A comment right after a command states the answer:
 * `# 404 {"code":"NOT_FOUND",...}` checks the status and the code and message it names;
 * `# 204, access-control-allow-origin: https://x` checks the status and the headers (with `-i`).
 * Without one the answer must not be an error. `id=$(curl ... | jq .json.id)` keeps a value for the
 * page's later lines (`$id`), as a shell would; it must not come out empty or `null`. A stream
 * (`curl -N`) is ended once it has answered with its first event. A ```sh nocheck block is skipped
 * (a sample for another host or setup).
 */
const root = resolve(import.meta.dirname, "../..");

interface CurlSample {
  line: number;
  command: string;
  expected?: string;
  /** `name` of a `name=$(curl ...)` line: the value is kept for the page's later lines. */
  assigns?: string;
}

const ASSIGNMENT = /^([A-Za-z_]\w*)=\$\((curl .*)\)$/;

function curlSamples(page: string): CurlSample[] {
  const samples: CurlSample[] = [];
  for (const block of codeBlocks(root, page)) {
    if (!["sh", "bash", "shell", "console"].includes(block.lang) || block.flags.includes("nocheck")) continue;
    const lines = block.code.split("\n");
    for (let i = 0; i < lines.length; i++) {
      if (!/^([A-Za-z_]\w*=\$\()?curl /.test(lines[i]!)) continue;
      const line = block.line + i;
      let command = lines[i]!;
      while (command.endsWith("\\")) command = `${command.slice(0, -1)} ${lines[++i]!.trim()}`;
      const assignment = ASSIGNMENT.exec(command);
      if (assignment) {
        samples.push({ line, command: assignment[2]!, assigns: assignment[1] });
        continue;
      }
      const next = lines[i + 1]?.match(/^# (\d{3}\b.*)$/);
      samples.push({ line, command, expected: next?.[1] });
    }
  }
  return samples;
}

const pages = markdownPages(root)
  .map((page) => ({ page, samples: curlSamples(page) }))
  .filter(({ samples }) => samples.length > 0);

interface CurlRun {
  code: number;
  output: string;
  stdout: string;
  /** The HTTP status: `-w`'s for a finished command, the response line's for a stream ended here. */
  status: number;
  /** A stream this test ended after its first event (its exit code is then not curl's own). */
  ended: boolean;
}

/** The shell line `command` with `variables`; within 20 s, or it fails with what it printed. */
function runCurl(command: string, cwd: string, variables: Record<string, string> = {}): Promise<CurlRun> {
  return new Promise((resolveRun, reject) => {
    const child = spawn("sh", ["-c", command], { cwd, detached: true, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...variables } });
    let stdout = "";
    let stderr = "";
    let ended = false;
    const end = () => {
      ended = true;
      try {
        process.kill(-child.pid!, "SIGTERM");
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      end();
      reject(new Error(`${command}: no answer within 20 s:\n${stdout}${stderr}`));
    }, 20_000);
    child.stdout!.on("data", (chunk) => {
      stdout += chunk;
      // A stream (`-D -` shows its response line) has answered once an event follows its headers.
      if (!ended && /^HTTP\/[\d.]+ \d{3}\b[\s\S]*?\r?\n\r?\n[\s\S]*^data: /m.test(stdout)) end();
    });
    child.stderr!.on("data", (chunk) => (stderr += chunk));
    child.once("close", (code) => {
      clearTimeout(timer);
      const output = stdout + stderr;
      const status = Number(/__STATUS__(\d{3})/.exec(output)?.[1] ?? /^HTTP\/[\d.]+ (\d{3})/m.exec(stdout)?.[1]);
      resolveRun({ code: code ?? 1, output, stdout, status, ended });
    });
  });
}

/**
 * The addresses a page signs up (`sign-up/email` with an `"email"`): pages share one blog, so
 * no two pages may sign up the same one (the second would be refused as taken).
 */
function signedUp(samples: CurlSample[]): string[] {
  return samples.filter((sample) => sample.command.includes("/api/auth/sign-up/email")).flatMap((sample) => [...sample.command.matchAll(/"email":"([^"]+)"/g)].map((match) => match[1]!));
}

/** The pages a newcomer reads in order, first, on the fresh blog; every other page beside them. */
const SHARED = ["README.md", "examples/blog/README.md"];

function check(sample: CurlSample, result: CurlRun, expect: ExpectStatic) {
  const where = `line ${sample.line}: ${sample.command}\n${result.output}`;
  if (!result.ended) expect(result.code, where).toBe(0);
  const status = result.status;
  if (!sample.expected) {
    expect(status, where).toBeLessThan(400);
    return;
  }
  const [, expectedStatus, rest] = /^(\d{3}),?\s*(.*)$/.exec(sample.expected)!;
  expect(status, where).toBe(Number(expectedStatus));
  if (rest!.startsWith("{")) {
    for (const key of ["code", "message"]) {
      const value = new RegExp(`"${key}":"([^"]*)"`).exec(rest!)?.[1];
      if (value && !value.includes("...")) expect(result.output, where).toContain(`"${key}":"${value}"`);
    }
  } else {
    for (const header of rest!.split(/,\s*(?=[\w-]+:)/)) {
      const [name, value] = header.split(/:\s*/, 2);
      if (!name || !value || value.includes("...")) continue;
      expect(result.output.toLowerCase(), where).toContain(`${name.toLowerCase()}: ${value.toLowerCase()}`);
    }
  }
}

describe("docs: curl samples against the served blog", { concurrent: true }, () => {
  let dir: string;
  let blog: StartedBlog;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "trellis-curl-"));
    await buildBlog();
    blog = await serveBuiltBlog({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: "memory://", CORS_ORIGINS: "https://app.example.com", DATABASE_URL: "", NODE_ENV: "development" });
  }, 180_000);
  afterAll(async () => {
    await blog?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("finds curl samples", ({ expect }) => {
    expect(pages.length).toBeGreaterThan(2);
  });

  it("no two pages sign up the same address (they share one blog)", ({ expect }) => {
    const first = new Map<string, string>();
    for (const { page, samples } of pages) {
      for (const email of new Set(signedUp(samples))) {
        expect(first.get(email), `${page} signs up ${email}, as ${first.get(email)} does: give one of them an address of its own`).toBeUndefined();
        first.set(email, page);
      }
    }
  });

  /** One page's samples in order, against the blog, in a folder of its own (its cookie jar, its variables). */
  async function runPage(samples: CurlSample[], expect: ExpectStatic) {
    const cwd = await mkdtemp(join(dir, "page-"));
    const target = blog.url.slice("http://".length);
    const variables: Record<string, string> = {};
    for (const sample of samples) {
      // The samples say localhost:3000; the blog listens on a free port. Origins stay as written.
      const local = sample.command.replace(/(?<![\w/])(http:\/\/)?localhost:3000(?=\/)/g, (_, scheme = "") => scheme + target);
      if (sample.assigns) {
        const result = await runCurl(local, cwd, variables);
        const value = result.stdout.trim();
        expect(result.code, `line ${sample.line}: ${sample.command}\n${result.output}`).toBe(0);
        expect(value, `line ${sample.line}: ${sample.command} gave no value`).not.toMatch(/^(|null)$/);
        variables[sample.assigns] = value;
        continue;
      }
      // A stream never ends by itself: its response line (-D -) and first event end it here, so a
      // sample's own --max-time (a reader's way out) is lifted past runCurl's limit.
      const streaming = /\s-[a-zA-Z]*N\b/.test(sample.command);
      const command = streaming ? `${local} -D - --max-time 60` : `${local} -w '\\n__STATUS__%{http_code}'`;
      check(sample, await runCurl(command, cwd, variables), expect);
    }
  }

  // README.md, then the blog's README, in that order: a newcomer follows them that way.
  it("README.md, then examples/blog/README.md, in that order", async ({ expect }) => {
    for (const page of SHARED) await runPage(pages.find((entry) => entry.page === page)!.samples, expect);
  }, 120_000);

  // Every other page beside them: each states nothing about rows the others write.
  it.for(pages.filter(({ page }) => !SHARED.includes(page)))("$page", { timeout: 120_000 }, async ({ samples }, { expect }) => {
    await runPage(samples, expect);
  });
});

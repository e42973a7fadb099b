import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeBlocks, markdownPages } from "./markdown.js";
import { buildBlog, serveBuiltBlog } from "../support/npm-start.js";

/**
 * Every `curl` sample of README.md, docs/ and the examples' READMEs runs, in page order, against
 * the blog as `npm start` serves it (built once, embedded database in memory), a fresh server per page, except that
 * README.md and then examples/blog/README.md share one blog: a newcomer follows them in that order.
 * A comment right after a command states the answer:
 * `# 404 {"code":"NOT_FOUND",...}` checks the status and the code and message it names;
 * `# 204, access-control-allow-origin: https://x` checks the status and the headers (with `-i`).
 * Without one the answer must not be an error. `id=$(curl ... | jq .json.id)` keeps a value for the
 * page's later lines (`$id`), as a shell would; it must not come out empty or `null`. Each page has
 * its own cookie jar and variables. A ```sh nocheck block is skipped (a sample for another host or setup).
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

function runCurl(command: string, cwd: string, variables: Record<string, string> = {}): Promise<{ code: number; output: string; stdout: string }> {
  return new Promise((resolveRun) => {
    execFile("sh", ["-c", command], { cwd, timeout: 20_000, env: { ...process.env, ...variables } }, (error, stdout, stderr) =>
      resolveRun({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr, stdout }),
    );
  });
}

/** The pages a newcomer reads in order against one blog; every other page gets a fresh one. */
const SHARED = ["README.md", "examples/blog/README.md"];

function check(sample: CurlSample, result: { code: number; output: string }, streaming: boolean) {
  const where = `line ${sample.line}: ${sample.command}\n${result.output}`;
  // A stream is cut by --max-time (exit 28) once it has answered.
  if (!(streaming && result.code === 28)) expect(result.code, where).toBe(0);
  const status = Number(/__STATUS__(\d{3})/.exec(result.output)?.[1]);
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

describe("docs: curl samples against the served blog", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "trellis-curl-"));
    await buildBlog();
  }, 120_000);
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("finds curl samples", () => {
    expect(pages.length).toBeGreaterThan(2);
  });

  const startBlog = () => serveBuiltBlog({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: "memory://", CORS_ORIGINS: "https://app.example.com", DATABASE_URL: "", NODE_ENV: "development" });

  /** One page's samples in order, against `url`, in a folder of its own (its cookie jar, its variables). */
  async function runPage(samples: CurlSample[], url: string) {
    const cwd = await mkdtemp(join(dir, "page-"));
    const target = url.slice("http://".length);
    const variables: Record<string, string> = {};
    for (const sample of samples) {
      const streaming = /\s-[a-zA-Z]*N\b/.test(sample.command);
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
      const command = `${local} -w '\\n__STATUS__%{http_code}'${streaming ? " --max-time 3" : ""}`;
      check(sample, await runCurl(command, cwd, variables), streaming);
    }
  }

  // README.md, then the blog's README, on one blog: both are followed in that order on a fresh start.
  it("README.md, then examples/blog/README.md, against one blog", async () => {
    const blog = await startBlog();
    try {
      for (const page of SHARED) await runPage(pages.find((entry) => entry.page === page)!.samples, blog.url);
    } finally {
      await blog.stop();
    }
  }, 240_000);

  // A fresh blog per other page: each page's samples assume the blog as `npm start` leaves it.
  it.each(pages.filter(({ page }) => !SHARED.includes(page)))("$page", async ({ samples }) => {
    const blog = await startBlog();
    try {
      await runPage(samples, blog.url);
    } finally {
      await blog.stop();
    }
  }, 180_000);
});

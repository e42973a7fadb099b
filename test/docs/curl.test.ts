import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeBlocks, markdownPages } from "./markdown.js";
import { npmStart } from "../support/npm-start.js";

/**
 * Every `curl` sample of README.md, docs/ and the examples' READMEs runs, in page order, against
 * the blog served by `npm start` (embedded database in memory), a fresh one per page. A comment right after a command states the answer:
 * `# 404 {"code":"NOT_FOUND",...}` checks the status and the code and message it names;
 * `# 204, access-control-allow-origin: https://x` checks the status and the headers (with `-i`).
 * Without one the answer must not be an error. Each page has its own cookie jar. A ```sh nocheck
 * block is skipped (a sample for another host or setup).
 */
const root = resolve(import.meta.dirname, "../..");

interface CurlSample {
  line: number;
  command: string;
  expected?: string;
}

function curlSamples(page: string): CurlSample[] {
  const samples: CurlSample[] = [];
  for (const block of codeBlocks(root, page)) {
    if (!["sh", "bash", "shell", "console"].includes(block.lang) || block.flags.includes("nocheck")) continue;
    const lines = block.code.split("\n");
    for (let i = 0; i < lines.length; i++) {
      if (!lines[i]!.startsWith("curl ")) continue;
      const line = block.line + i;
      let command = lines[i]!;
      while (command.endsWith("\\")) command = `${command.slice(0, -1)} ${lines[++i]!.trim()}`;
      const next = lines[i + 1]?.match(/^# (\d{3}\b.*)$/);
      samples.push({ line, command, expected: next?.[1] });
    }
  }
  return samples;
}

const pages = markdownPages(root)
  .map((page) => ({ page, samples: curlSamples(page) }))
  .filter(({ samples }) => samples.length > 0);

function runCurl(command: string, cwd: string): Promise<{ code: number; output: string }> {
  return new Promise((resolveRun) => {
    execFile("sh", ["-c", command], { cwd, timeout: 20_000 }, (error, stdout, stderr) =>
      resolveRun({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
    );
  });
}

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
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("finds curl samples", () => {
    expect(pages.length).toBeGreaterThan(2);
  });

  // A fresh blog per page: each page's samples assume the blog as `npm start` leaves it (ids from 1).
  it.each(pages)("$page", async ({ samples }) => {
    const cwd = await mkdtemp(join(dir, "page-"));
    const blog = await npmStart({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: "memory://", CORS_ORIGINS: "https://app.example.com", DATABASE_URL: "", NODE_ENV: "development" });
    try {
      const target = blog.url.slice("http://".length);
      for (const sample of samples) {
        const streaming = /\s-[a-zA-Z]*N\b/.test(sample.command);
        // The samples say localhost:3000; the blog listens on a free port. Origins stay as written.
        const command = `${sample.command.replace(/(?<![\w/])(http:\/\/)?localhost:3000(?=\/)/g, (_, scheme = "") => scheme + target)} -w '\\n__STATUS__%{http_code}'${streaming ? " --max-time 3" : ""}`;
        check(sample, await runCurl(command, cwd), streaming);
      }
    } finally {
      await blog.stop();
    }
  }, 180_000);
});

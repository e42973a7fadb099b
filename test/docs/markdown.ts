import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

/** A fenced code block of a markdown page. */
export interface CodeBlock {
  /** The page, relative to the repository root. */
  page: string;
  /** 1-based line of the first line of code (after the fence). */
  line: number;
  /** The fence's language (`ts`, `sh`, ...). */
  lang: string;
  /** The words after the language: `nocheck`, `file=server.ts`. */
  flags: string[];
  code: string;
}

/** README.md, every page under docs/ and each example's README.md, with paths relative to `root`. */
export function markdownPages(root: string): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? walk(join(dir, entry.name)) : entry.name.endsWith(".md") ? [join(dir, entry.name)] : [],
    );
  const examples = readdirSync(join(root, "examples"), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(root, "examples", entry.name, "README.md")))
    .map((entry) => `examples/${entry.name}/README.md`);
  return ["README.md", ...walk(join(root, "docs")).map((path) => relative(root, path)).sort(), ...examples.sort()];
}

/** Every fenced block of a page (``` or ~~~ fences, any indentation a list item gives them). */
export function codeBlocks(root: string, page: string): CodeBlock[] {
  const lines = readFileSync(join(root, page), "utf8").split("\n");
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)\s*(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, lang, rest] = open;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !lines[j]!.trimStart().startsWith(fence!)) body.push(lines[j++]!.slice(indent!.length));
    blocks.push({ page, line: i + 2, lang: lang!.toLowerCase(), flags: rest!.split(/\s+/).filter(Boolean), code: body.join("\n") });
    i = j;
  }
  return blocks;
}

import { dirname, join, resolve } from "node:path";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";
import { codeBlocks, markdownPages, type CodeBlock } from "./markdown.js";

/**
 * Every TypeScript sample in README.md and docs/ is type-checked against the source, as a module
 * importing `trellis/*` (tsconfig.json's paths). A fence written ```ts nocheck is a fragment and is
 * skipped; ```ts file=server.ts names a sample so other samples of the same page import it as
 * "./server.js".
 */
const root = resolve(import.meta.dirname, "../..");
const pages = markdownPages(root);
const samples = pages.flatMap((page) => codeBlocks(root, page)).filter((block) => ["ts", "typescript"].includes(block.lang) && !block.flags.includes("nocheck"));

/** Where a sample lives while it is checked: beside the page, so `node_modules` resolves as usual. */
function samplePath(block: CodeBlock): string {
  const named = block.flags.find((flag) => flag.startsWith("file="))?.slice("file=".length);
  return join(root, ".samples", block.page.replace(/\.md$/, ""), named ?? `line-${block.line}.ts`);
}

describe("docs: TypeScript samples compile", () => {
  const problems = new Map<string, string[]>();

  beforeAll(() => {
    const config = ts.getParsedCommandLineOfConfigFile(join(root, "tsconfig.json"), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!;
    const options = { ...config.options, noEmit: true };
    // Each sample is a module (so top-level await works and samples do not share a scope).
    const files = new Map(samples.map((block) => [samplePath(block), { block, text: `${block.code}\nexport {};\n` }]));
    const host = ts.createCompilerHost(options);
    const { fileExists, readFile, getSourceFile, directoryExists } = host;
    host.fileExists = (path) => files.has(path) || fileExists(path);
    host.readFile = (path) => files.get(path)?.text ?? readFile(path);
    host.directoryExists = (path) => [...files.keys()].some((file) => dirname(file).startsWith(path)) || (directoryExists?.(path) ?? true);
    host.getSourceFile = (path, language, ...rest) => {
      const sample = files.get(path);
      return sample ? ts.createSourceFile(path, sample.text, language) : getSourceFile(path, language, ...rest);
    };
    const program = ts.createProgram([...files.keys()], options, host);
    // The samples' own diagnostics, and the program's: the rest of the source is `tsc --noEmit`'s
    // (npm test runs it over the same tsconfig.json first), and checking every file of it again
    // here took most of this file's time.
    const diagnostics = [
      ...program.getConfigFileParsingDiagnostics(),
      ...program.getOptionsDiagnostics(),
      ...program.getGlobalDiagnostics(),
      ...[...files.keys()].flatMap((path) => {
        const source = program.getSourceFile(path)!;
        return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
      }),
    ];
    for (const diagnostic of diagnostics) {
      const sample = diagnostic.file && files.get(diagnostic.file.fileName);
      const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
      if (!sample) {
        problems.set("(outside the samples)", [...(problems.get("(outside the samples)") ?? []), message]);
        continue;
      }
      const { line } = diagnostic.file!.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
      const at = `${sample.block.page}:${sample.block.line + line}`;
      problems.set(sample.block.page, [...(problems.get(sample.block.page) ?? []), `${at}: ${message}`]);
    }
  }, 180_000);

  it("finds samples to check", () => {
    expect(samples.length).toBeGreaterThan(10);
  });

  it.each(pages)("%s", (page) => {
    expect(problems.get(page) ?? []).toEqual([]);
  });

  it("reports nothing outside the samples", () => {
    expect(problems.get("(outside the samples)") ?? []).toEqual([]);
  });
});

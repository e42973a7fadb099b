import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

// The kernel core is the lifecycle, router, middleware chain and context; helpers live in named
// subfolders. Both rules below are house rules a reviewer would otherwise have to count by hand.
const root = resolve(import.meta.dirname, "../..");
const kernel = join(root, "kernel");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** Relative imports of one file, resolved to source paths. */
function importsOf(file: string, known: ReadonlySet<string>): string[] {
  const text = readFileSync(file, "utf8");
  const found: string[] = [];
  for (const [, spec] of text.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)) {
    const path = resolve(dirname(file), spec!).replace(/\.js$/, ".ts");
    const target = known.has(path) ? path : join(path, "index.ts");
    if (known.has(target)) found.push(target);
  }
  return found;
}

/** Strongly connected components of more than one file (Tarjan). */
function cycles(files: string[]): string[][] {
  const known = new Set(files);
  const graph = new Map(files.map((file) => [file, importsOf(file, known)]));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  const visit = (file: string): void => {
    index.set(file, counter);
    low.set(file, counter++);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file)!) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(relative(root, member));
    } while (member !== file);
    if (component.length > 1) found.push(component.sort());
  };
  for (const file of files) if (!index.has(file)) visit(file);
  return found;
}

describe("kernel layout", () => {
  it("keeps the core (top-level kernel/*.ts) under 2,000 lines", () => {
    const core = readdirSync(kernel).filter((name) => name.endsWith(".ts"));
    const lines = core.reduce((sum, name) => sum + readFileSync(join(kernel, name), "utf8").split("\n").length - 1, 0);
    expect(lines).toBeLessThanOrEqual(2000);
  });

  it("has no import cycles inside the kernel", () => {
    expect(cycles(sources(kernel))).toEqual([]);
  });
});

import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
  );
}

describe("plugins use only the kernel's public API", () => {
  it("no first-party plugin or example plugin imports a kernel internal", () => {
    const offenders: string[] = [];
    for (const file of [...files(join(root, "plugins")), ...files(join(root, "examples", "in-house-plugin"))]) {
      for (const match of readFileSync(file, "utf8").matchAll(/from\s+["']((?:\.\.\/)+kernel\/[^"']+)["']/g)) {
        if (!/kernel\/index(\.js)?$/.test(match[1])) offenders.push(`${relative(root, file)} imports ${match[1]}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});

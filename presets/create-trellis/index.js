#!/usr/bin/env node
// `npm create trellis@latest <folder> [-- --surfaces openapi,mcp,files,live,admin]`: `trellis new`
// from the Trellis release published with this package, the new project depending on that release.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const { version } = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8"));
const args = process.argv.slice(2);
if (args.length === 0 || args[0] === "--help" || args[0] === "-h") {
  console.log("usage: npm create trellis@latest <folder> [-- --surfaces openapi,mcp,files,live,admin] [--no-install]");
  process.exit(args.length === 0 ? 2 : 0);
}
// The `trellis` bin sits beside the package's main module (its exports map names no bin file).
const bin = join(dirname(fileURLToPath(import.meta.resolve("trellis"))), "bin.js");
const chosen = args.some((arg) => arg === "--trellis" || arg.startsWith("--trellis="));
const result = spawnSync(process.execPath, [bin, "new", ...args, ...(chosen ? [] : ["--trellis", `^${version}`])], { stdio: "inherit" });
process.exit(result.status ?? 1);

import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

/** One built file of the dashboard, served under `<path>/assets/<name>` (the name carries a content hash). */
export interface DashboardAsset {
  name: string;
  type: string;
  body: Uint8Array;
}

export interface DashboardAssets {
  script: DashboardAsset;
  style: DashboardAsset;
}

/** Where the package build writes the dashboard (`dist/admin-ui/`), next to the bundled module. */
const PREBUILT = new URL("./admin-ui/", import.meta.url);
const SOURCE = new URL("./ui/main.tsx", import.meta.url);

let loading: Promise<DashboardAssets> | undefined;

/**
 * The dashboard's script and stylesheet: the files the package build wrote, or, running from
 * source (tests, `tsx`), the same bundle made once with esbuild on first request.
 */
export function dashboardAssets(): Promise<DashboardAssets> {
  if (!loading) {
    loading = prebuilt().then((found) => found ?? buildDashboard());
    // A failed build is not cached: the next request tries again.
    loading.catch(() => (loading = undefined));
  }
  return loading;
}

async function prebuilt(): Promise<DashboardAssets | undefined> {
  try {
    const manifest = JSON.parse(await readFile(new URL("manifest.json", PREBUILT), "utf8")) as { script: string; style: string };
    const read = async (name: string, type: string) => ({ name, type, body: new Uint8Array(await readFile(new URL(name, PREBUILT))) });
    return { script: await read(manifest.script, "text/javascript; charset=utf-8"), style: await read(manifest.style, "text/css; charset=utf-8") };
  } catch {
    return undefined;
  }
}

/** Bundles `ui/main.tsx` (Preact, one stylesheet), minified, with content-hashed names. */
export async function buildDashboard(): Promise<DashboardAssets> {
  const esbuild = await import("esbuild");
  const result = await esbuild.build({
    entryPoints: [fileURLToPath(SOURCE)],
    bundle: true,
    minify: true,
    format: "esm",
    target: "es2020",
    jsx: "automatic",
    jsxImportSource: "preact",
    write: false,
    outdir: "out",
    legalComments: "none",
    logLevel: "silent",
  });
  const pick = (ext: string) => result.outputFiles.find((file) => file.path.endsWith(ext))!.contents;
  return { script: hashed("app", ".js", "text/javascript; charset=utf-8", pick(".js")), style: hashed("app", ".css", "text/css; charset=utf-8", pick(".css")) };
}

function hashed(stem: string, ext: string, type: string, body: Uint8Array): DashboardAsset {
  const hash = createHash("sha256").update(body).digest("hex").slice(0, 10);
  return { name: `${stem}-${hash}${ext}`, type, body };
}

/** Bytes and gzipped bytes of the script and stylesheet together (the budget is 150 KB gzipped). */
export function assetSizes(assets: DashboardAssets): { bytes: number; gzip: number } {
  const files = [assets.script.body, assets.style.body];
  return { bytes: files.reduce((sum, body) => sum + body.byteLength, 0), gzip: files.reduce((sum, body) => sum + gzipSync(body).byteLength, 0) };
}

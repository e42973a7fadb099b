import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { freshBuild } from "../support/built-package.js";
import { REPORTS, apiReports } from "./api-report.js";

// Read from dist/: CI's `npm install` has just built it, so a stale build there fails rather than skips.
const built = freshBuild();
if (!built && process.env.CI) throw new Error("the API report is read from the build: dist/ is missing or older than the sources (npm run build)");
if (!built) console.log("skipping the API report comparison: dist/ is missing or older than the sources (npm run build)");

describe.skipIf(!built)("the API report (docs/api/)", () => {
  it("matches the public types of every export; after a deliberate change, `npm run build && npm run api-report` and commit the diff", { timeout: 120_000 }, () => {
    const reports = apiReports();
    expect(readdirSync(REPORTS).sort()).toEqual([...reports.keys()].sort());
    for (const [file, text] of reports) expect(readFileSync(join(REPORTS, file), "utf8"), `docs/api/${file}`).toBe(text);
  });
});

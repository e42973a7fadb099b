import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The files that take longest (a minute or more of wall time on two cores: child processes, npm,
 * kill cycles), longest first. A fresh checkout has no recorded durations, so vitest would order by
 * file size and could start one of these last, leaving it to run alone while the other worker idles.
 */
const LONGEST = [
  // Mostly waiting on npm and the network (a registry proxying every package): first, beside the rest.
  "test/package/published.test.ts",
  "test/cli/commands.test.ts",
  "test/docs/curl.test.ts",
  "test/reliability/durability.test.ts",
  "test/presets/startup-errors.test.ts",
  "test/examples/blog-start.test.ts",
  "test/docs/samples.test.ts",
  "test/embedded/backup.test.ts",
];

/** Vitest's order (recorded durations, else size), with the files above moved to the front. */
export class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification) => {
      const index = LONGEST.findIndex((path) => spec.moduleId.endsWith(`/${path}`));
      return index === -1 ? LONGEST.length : index;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

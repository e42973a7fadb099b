import { TrellisError } from "../errors.js";

/** What validation found: one problem keeps its own code; several are listed together so one build shows them all. */
export function throwProblems(problems: readonly TrellisError[]): void {
  if (problems.length === 1) throw problems[0];
  if (problems.length > 1) {
    const lines = problems.map((problem) => `${problem.plugin ?? "kernel"}: ${problem.message}`);
    throw new TrellisError("KERNEL_VALIDATION_FAILED", `Cannot build:\n${lines.join("\n")}`, { hook: "validate", cause: [...problems] });
  }
}

import type { ValidationError } from "@orpc/server";

/**
 * Errors as people read them: the stack, validation issues as `path: message` lines (not
 * `[Object]`), and every cause below. Used by the default `onError` and the built-in logger.
 */

interface Issue {
  path?: readonly (PropertyKey | { key: PropertyKey })[];
  message: string;
}

/** The issues of a validation error (a Standard Schema failure, anywhere in the cause chain). */
export function issuesOf(error: unknown): Issue[] | undefined {
  for (let current = error, depth = 0; current && depth < 5; current = (current as { cause?: unknown }).cause, depth++) {
    const issues = (current as { issues?: unknown }).issues;
    if (Array.isArray(issues) && issues.every((issue) => typeof issue?.message === "string")) return issues as Issue[];
  }
  return undefined;
}

/** `title: Too small: expected string to have >=1 characters`, or the message alone at the root. */
export function formatIssue(issue: Issue): string {
  const path = (issue.path ?? []).map((segment) => String(typeof segment === "object" ? segment.key : segment)).join(".");
  return path ? `${path}: ${issue.message}` : issue.message;
}

/** An error's stack (or message), its validation issues, and each cause, as indented text. */
export function describeError(error: unknown): string {
  const lines: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 5; depth++) {
    const prefix = depth === 0 ? "" : "Caused by: ";
    if (current instanceof Error) {
      lines.push(prefix + (current.stack ?? `${current.name}: ${current.message}`));
      const issues = (current as { issues?: unknown }).issues;
      if (Array.isArray(issues)) for (const issue of issues) lines.push(`  - ${formatIssue(issue as Issue)}`);
      current = current.cause;
    } else {
      lines.push(prefix + String(current));
      current = undefined;
    }
  }
  return lines.join("\n");
}

/** An error as JSON fields: pino's `{ type, message, stack }`, plus its `code`, issues and cause. */
export function errorFields(error: Error): Record<string, unknown> {
  const fields: Record<string, unknown> = { type: error.name, message: error.message, stack: error.stack };
  const code = (error as { code?: unknown }).code;
  if (code !== undefined) fields.code = code;
  const issues = issuesOf(error);
  if (issues) fields.issues = issues.map(formatIssue);
  if (error.cause instanceof Error) fields.cause = errorFields(error.cause);
  else if (error.cause !== undefined) fields.cause = String(error.cause);
  return fields;
}

/**
 * `Invalid input: title: expected string, received undefined (and 1 more issue)`. Zod's own
 * messages often start with "Invalid input" already; it is said once.
 */
export function invalidInputMessage(issues: ValidationError["issues"]): string {
  const first = issues[0];
  if (!first) return "Invalid input";
  const detail = formatIssue({ path: first.path, message: first.message.replace(/^Invalid input(: |$)/, "") || "not accepted" });
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more issue${issues.length > 2 ? "s" : ""})` : "";
  return `Invalid input: ${detail}${more}`;
}

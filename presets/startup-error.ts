import { inspect } from "node:util";

/**
 * What `serve()` prints when the app cannot start: one block a person reads in a terminal, with the
 * error's code, its message and the fix (the `npm install` line for a missing package, the variable
 * to set for a missing secret), instead of an uncaught stack of 40 lines. The stack follows only
 * with `DEBUG` set, or when the error has no code (then it is a bug, and the stack is the report).
 */
export function startupErrorText(error: unknown, env: NodeJS.ProcessEnv = process.env): string {
  const code = codeOf(error);
  const problems = problemsOf(error);
  const lines = [`Trellis could not start${code ? `: ${code}` : ""}`];
  if (problems.length === 1) {
    lines.push(...indent(messageOf(error)));
    const fix = fixFor(error);
    if (fix) lines.push(...indent(`fix: ${fix}`));
  } else {
    // A failed build lists every problem: each with its own code, plugin and fix.
    for (const problem of problems) {
      const plugin = (problem as { plugin?: string }).plugin;
      lines.push(...indent(`${codeOf(problem) ?? "ERROR"}${plugin ? ` (${plugin})` : ""}: ${messageOf(problem)}`));
      const fix = fixFor(problem);
      if (fix) lines.push(...indent(`  fix: ${fix}`));
    }
  }
  if (!code || env.DEBUG) lines.push("", inspect(error, { depth: 4 }));
  else lines.push("  (set DEBUG=1 to see the stack)");
  return `${lines.join("\n")}\n`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function indent(text: string): string[] {
  return text.split("\n").map((line) => `  ${line}`);
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" ? code : undefined;
}

/** The error itself, or each problem a failed build listed (`KERNEL_VALIDATION_FAILED` keeps them as its cause). */
function problemsOf(error: unknown): unknown[] {
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  return Array.isArray(cause) && cause.length > 0 ? cause : [error];
}

/** The fix for one coded problem: what to run or set. Undefined when the message already is the fix. */
export function fixFor(problem: unknown): string | undefined {
  const code = codeOf(problem) ?? "";
  const message = messageOf(problem);
  if (code.endsWith("PEER_MISSING")) {
    // Every first-party peer error names its packages in double quotes.
    const packages = [...message.matchAll(/"((?:@[\w.-]+\/)?[\w.-]+)"/g)].map((match) => match[1]);
    return packages.length > 0 ? `npm install ${[...new Set(packages)].join(" ")}` : undefined;
  }
  switch (code) {
    case "AUTH_SECRET_MISSING":
    case "AUTH_SECRET_TOO_SHORT":
      return 'set AUTH_SECRET to at least 32 random characters: AUTH_SECRET="$(openssl rand -base64 32)"';
    case "SERVE_PORT_IN_USE":
      return "stop the process that holds the port, or choose another one (PORT=... npm start)";
    case "DB_URL_INVALID":
      return "set DATABASE_URL to postgres://user:password@host:5432/database";
    case "DB_UNREACHABLE":
      return "start the database server, or correct the host and port in DATABASE_URL";
    case "DB_LOGIN_FAILED":
      return "correct the user and password in DATABASE_URL";
    case "DB_NOT_FOUND":
      return "create the database (createdb <name>), or correct its name in DATABASE_URL";
    default:
      return undefined;
  }
}

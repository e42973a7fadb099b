// `trellis admin create <email> --role <role>` wrote whatever --role held: an empty role added an
// empty entry to the user's roles ("ops,admin," and the message "now holds the  role"), and "ops,
// admin" or "a b" became one role no check ever matches. The role is now one word, as
// `_admin.users.setRoles` takes it, and anything else is refused before the app is loaded.
import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const command = [join(root, "node_modules/tsx/dist/cli.mjs"), join(root, "presets/cli/index.ts")];

function trellis(args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [...command, ...args], { cwd: root, env: { ...process.env, NO_COLOR: "1" }, timeout: 60_000 }, (error, _stdout, stderr) =>
      done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stderr }),
    );
  });
}

describe("trellis admin create --role", () => {
  it.each(["", "  ", "ops, admin", "ops,admin", "two words"])("refuses %j with CLI_BAD_OPTION and exit code 2", { timeout: 60_000 }, async (role) => {
    const { code, stderr } = await trellis(["admin", "create", "ada@example.com", "--role", role]);
    expect(code).toBe(2);
    expect(stderr).toContain("CLI_BAD_OPTION");
    expect(stderr).toContain("--role");
  });
});

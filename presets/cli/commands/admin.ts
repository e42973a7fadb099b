import { randomBytes } from "node:crypto";
import { CliError, say } from "../output.js";
import { onApp } from "../app-target.js";
import type { CommandTarget } from "../control/commands.js";

export interface AdminCreateOptions {
  /** Sets this password on a new user; otherwise one is generated and printed once. */
  password?: string;
  name?: string;
  /** @default "admin" */
  role?: string;
}

/** `trellis admin create <email>`: promotes the user with that address, or creates them as an admin. */
export async function adminCreate(email: string, options: AdminCreateOptions): Promise<number> {
  const address = email.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+$/.test(address)) throw new CliError("CLI_BAD_EMAIL", `"${email}" is not an email address.`);
  const role = (options.role ?? "admin").trim();
  // One word, as `_admin.users.setRoles` takes it: `user.role` holds several separated by commas.
  if (!/^[^,\s]{1,64}$/.test(role)) {
    throw new CliError("CLI_BAD_OPTION", `--role "${options.role}" is not a role: a role is one word, without commas or spaces.`, "Pass one role, e.g. --role admin; run the command again for another.", 2);
  }
  return onApp("admin create", { address, role, password: options.password, name: options.name }, adminCreateOn);
}

/** The command's body, on the app built here or the one a running server serves. */
export async function adminCreateOn({ built }: CommandTarget, { address, role, ...options }: { address: string; role: string; password?: string; name?: string }): Promise<number> {
  const pending = ((await built.migrator.getMigrations()) as { executedAt?: Date }[]).filter((m) => !m.executedAt).length;
  if (pending) throw new CliError("CLI_MIGRATIONS_PENDING", `${pending} schema version(s) are not applied yet.`, "Run `trellis migrate up` first.");
  const auth = built.sealed.service("auth") as { api: { signUpEmail(input: { body: Record<string, string> }): Promise<{ user: { id: string } }> } } | undefined;
  if (!auth) throw new CliError("CLI_NO_AUTH", "This app has no .auth(): there are no users to make admin.");
  const db = built.db;
  const existing = (await db.selectFrom("user").select(["id", "role"]).where("email", "=", address).executeTakeFirst()) as { id: string; role: string | null } | undefined;
  if (existing) {
    const roles = new Set((existing.role ?? "").split(",").map((r) => r.trim()).filter(Boolean));
    if (roles.has(role)) {
      say(`${address} already holds the ${role} role`);
      return 0;
    }
    roles.add(role);
    await db.updateTable("user").set({ role: [...roles].join(",") }).where("id", "=", existing.id).execute();
    say(`${address} now holds the ${role} role`);
    return 0;
  }
  const password = options.password ?? randomBytes(12).toString("base64url");
  const { user } = await auth.api.signUpEmail({ body: { email: address, password, name: options.name ?? address.split("@")[0]! } });
  await db.updateTable("user").set({ role }).where("id", "=", user.id).execute();
  say(`created ${address} with the ${role} role`);
  if (!options.password) say(`password: ${password}  (shown once: sign in and change it)`);
  return 0;
}

import { hasRole, type AppDatabase, type PluginContext } from "../../kernel/index.js";

/**
 * The documented bootstrap: the user with `email` gets the first admin role, once, while nobody
 * holds an admin role. It runs after migrations (the user may exist already) and after a user row
 * is inserted (they sign up later). It never creates a user and never sets a password: the person
 * signs up through the auth endpoints with that address.
 */
export function firstAdmin(ctx: PluginContext, email: string, roles: readonly string[]): void {
  const db = ctx.resources.db;
  let pending: Promise<void> = Promise.resolve();
  const promote = () => {
    pending = pending.then(() => promoteOnce(db, email, roles)).catch((error) => ctx.report(error, "route"));
    return pending;
  };
  ctx.hooks.migrated.tap(async () => {
    if (ctx.schema.tables.user) await promote();
  });
  ctx.hooks.changed.tap((change) => {
    if (change.table === "user" && change.op === "insert") void promote();
  });
  ctx.hooks.close.tap(() => pending);
}

async function promoteOnce(db: AppDatabase<any>, email: string, roles: readonly string[]): Promise<void> {
  // Roles are comma-separated: narrow with LIKE, decide with the same parser permissions use.
  let candidates = db.selectFrom("user").select("role");
  candidates = candidates.where((eb: any) => eb.or(roles.map((role) => eb("role", "like", `%${role}%`))));
  const holders = (await candidates.execute()) as { role: string | null }[];
  if (holders.some((user) => hasRole(user, roles))) return;
  await db.updateTable("user").set({ role: roles[0] }).where("email", "=", email).execute();
}

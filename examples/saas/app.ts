import { App, type AppOptions } from "trellis";
import { schema } from "trellis/schema";

/** Team tasks: organizations with members and roles, projects and tasks scoped to the active one. */
export const v1 = schema("1")
  .auth({ organizations: true })
  .table("project", (t) => ({
    id: t.serial().primaryKey(),
    orgId: t.text().references("organization", "id", { onDelete: "cascade" }).index(),
    name: t.text(),
  }))
  .table("task", (t) => ({
    id: t.serial().primaryKey(),
    orgId: t.text().references("organization", "id", { onDelete: "cascade" }).index(),
    projectId: t.integer().references("project", "id", { onDelete: "cascade" }),
    createdBy: t.text().references("user", "id"),
    title: t.text(),
    done: t.boolean().default(false),
  }))
  .relation("project", (rel) => ({ tasks: rel.hasMany("task", { from: "id", to: "projectId" }) }))
  .search("task", ["title"])
  .build();

/**
 * Every member sees and writes the team's tasks; admins (and owners) manage projects and delete
 * tasks; only owners delete a project. Another team's rows do not exist for anyone outside it.
 * Built as a function so tests run it on an in-memory database.
 */
export function createSaas(db: AppOptions["db"], options: Partial<AppOptions> & { secret?: string } = {}) {
  const { secret, ...appOptions } = options;
  const baseUrl = options.baseUrl ?? process.env.APP_BASE_URL ?? "http://localhost:3000";
  return new App({ name: "Team tasks", baseUrl, db, ...appOptions })
    .schema(v1)
    .auth({
      // No fallback in production: .auth() then refuses to start with AUTH_SECRET_MISSING.
      secret: secret ?? process.env.AUTH_SECRET ?? (process.env.NODE_ENV === "production" ? "" : "team-tasks-development-secret-change-me"),
      emailAndPassword: { enabled: true },
      // Invitation mails link here: the page shows the invitation and accepts or declines it.
      organization: { invitationUrl: `${baseUrl}/invite/{id}`, organizationLimit: 10 },
    })
    // SMTP_URL in production; in development invitations land in the outbox (GET /_mail/latest?to=...).
    .mail({ transport: process.env.SMTP_URL, from: process.env.MAIL_FROM ?? "Team tasks <no-reply@localhost>" })
    .resource("project", {
      tenant: "orgId",
      // A project's tasks under the task resource's own rules (its tenant and "member" list rule).
      includable: [{ relation: "tasks", scoped: true }],
      permissions: { list: "member", get: "member", create: "org:admin", update: "org:admin", delete: "org:owner" },
    })
    .resource("task", {
      tenant: "orgId",
      ownerColumn: "createdBy",
      permissions: { list: "member", get: "member", create: "member", update: "member", delete: "org:admin" },
      live: true,
    });
}

import { schema, timestamps } from "trellis/schema";

/**
 * Version 1: accounts and organizations (the auth tables, with better-auth's organization, member
 * and invitation tables), and projects and tasks that belong to an organization. Deleting an
 * organization deletes its projects and tasks. To change the schema, add a version
 * (`schema("2").extend(v1)...`) and register it after this one in app.ts; never edit a version that
 * was applied (`trellis migrate check` finds it).
 */
export const v1 = schema("1")
  .auth({
    organizations: true,
    twoFactor: true, // auth:2fa
    passkeys: true, // auth:passkeys
  })
  .table("project", (t) => ({
    id: t.serial().primaryKey(),
    orgId: t.text().references("organization", "id", { onDelete: "cascade" }).index(),
    name: t.text(),
    ...timestamps(t),
  }))
  .table("task", (t) => ({
    id: t.serial().primaryKey(),
    orgId: t.text().references("organization", "id", { onDelete: "cascade" }).index(),
    projectId: t.integer().nullable().references("project", "id", { onDelete: "cascade" }).index(),
    createdBy: t.text().references("user", "id", { onDelete: "cascade" }).index(),
    title: t.text(),
    done: t.boolean().default(false),
    ...timestamps(t),
  }))
  .relation("project", (rel) => ({ tasks: rel.hasMany("task", { from: "id", to: "projectId" }) }))
  .files({ attachTo: ["task"] }) // surface:files
  .build();

import { join } from "node:path";
import { z } from "zod";
import { createStorage } from "unstorage"; // surface:files
import fsDriver from "unstorage/drivers/fs"; // surface:files
import { App, mcp, type AppOptions } from "trellis"; // surface:mcp
import { App, type AppOptions } from "trellis"; // surface:-mcp
import { embedded } from "trellis/embedded";
import { TrellisError } from "trellis/kernel";
import { postgresDialect, postgresLive } from "trellis/db"; // surface:live
import { postgresDialect } from "trellis/db"; // surface:-live
import { fromStore } from "trellis/storage"; // surface:files
import { v1 } from "./schema.js";

export interface AppInput {
  /** @default PostgreSQL at DATABASE_URL when set, else the embedded database in DATA_DIR/db */
  db?: AppOptions["db"];
  /** @default AUTH_SECRET */
  secret?: string;
  /** @default uploaded files on disk in DATA_DIR/files (tests pass an in-memory store) */ // surface:files
  storage?: AppOptions["storage"]; // surface:files
}

/**
 * __APP_TITLE__: team tasks. Users sign up, create organizations (their creator is `owner`) and
 * invite colleagues by mail; projects and tasks belong to the caller's active organization, and
 * another organization's rows answer 404 as missing ones do. A function, so tests run it on a fresh
 * in-memory database (`testApp(createApp)` in test/app.test.ts) and the CLI loads it from
 * package.json's `main`.
 */
export default function createApp(input: AppInput = {}) {
  const { DATABASE_URL, DATA_DIR, AUTH_SECRET, APP_BASE_URL, SMTP_URL, MAIL_FROM } = process.env;
  const { GITHUB_CLIENT_ID, GITHUB_CLIENT_SECRET } = process.env; // auth:github
  const { GOOGLE_CLIENT_ID, GOOGLE_CLIENT_SECRET } = process.env; // auth:google
  const secret = input.secret ?? AUTH_SECRET;
  if (!secret) throw new TrellisError("AUTH_SECRET_MISSING", "AUTH_SECRET is not set: copy .env.example to .env, or run `trellis new` again to generate one.");
  const baseUrl = APP_BASE_URL ?? "http://localhost:3000";
  // The app's data directory (README.md): the embedded database in db/, `trellis db backup`'s backups in backups/.
  const dataDir = DATA_DIR ?? ".data";
  const db = input.db ?? (DATABASE_URL ? postgres(DATABASE_URL) : embedded({ dataDir: join(dataDir, "db") }));
  // Uploaded files in files/ (fromStore takes any unstorage driver: S3, Redis, ...). // surface:files
  const storage = input.storage ?? fromStore(createStorage({ driver: fsDriver({ base: join(dataDir, "files") }) })); // surface:files
  return new App({ name: "__APP_TITLE__", baseUrl, db }) // surface:-files
  return new App({ name: "__APP_TITLE__", baseUrl, db, storage }) // surface:files
    .schema(v1)
    .auth({
      secret,
      emailAndPassword: { enabled: true },
      // Users sign in at /auth/sign-in with the methods configured here (docs: sign-in.md). // auth:social
      // Each provider is on once its keys are in .env; register the callback <APP_BASE_URL>/api/auth/callback/<provider>. // auth:social
      socialProviders: { // auth:social
        github: { clientId: GITHUB_CLIENT_ID ?? "", clientSecret: GITHUB_CLIENT_SECRET ?? "", enabled: Boolean(GITHUB_CLIENT_ID) }, // auth:github
        google: { clientId: GOOGLE_CLIENT_ID ?? "", clientSecret: GOOGLE_CLIENT_SECRET ?? "", enabled: Boolean(GOOGLE_CLIENT_ID) }, // auth:google
      }, // auth:social
      // better-auth's organization plugin: its endpoints are under /api/auth/organization/*.
      // An invitation mail links to INVITE_URL ({id} is the invitation): your page that shows it
      // and posts { invitationId } to /api/auth/organization/accept-invitation (or reject-invitation).
      organization: { invitationUrl: process.env.INVITE_URL ?? `${baseUrl}/invite/{id}`, organizationLimit: 10 },
    })
    // Invitations go out by mail: SMTP_URL (needs `npm install nodemailer`), else the outbox, which
    // delivers nothing and keeps each message (GET /_mail/latest?to=... in development).
    .mail({ transport: SMTP_URL, from: MAIL_FROM ?? "__APP_TITLE__ <no-reply@localhost>" })
    // Every member reads the team's projects; admins (and owners) create and rename them; only owners delete one.
    .resource("project", {
      tenant: "orgId",
      includable: [{ relation: "tasks", scoped: true }],
      permissions: { list: "member", get: "member", create: "org:admin", update: "org:admin", delete: "org:owner" },
      readonly: ["createdAt", "updatedAt"],
    })
    // Every member reads, creates and updates the team's tasks; admins (and owners) delete them.
    .resource("task", {
      tenant: "orgId",
      ownerColumn: "createdBy",
      permissions: { list: "member", get: "member", create: "member", update: "member", delete: "org:admin" },
      readonly: ["createdAt", "updatedAt"],
      live: true, // surface:live
    })
    .openapi() // surface:openapi
    .mcp() // surface:mcp
    .files({ permissions: { upload: "authenticated", list: "owner", get: "owner", delete: "owner" } }) // surface:files
    .admin({ firstAdminEmail: process.env.ADMIN_EMAIL }) // surface:admin
    .procedure(
      "task.open",
      (base) =>
        base
          .meta(mcp.tool({ description: "How many of the team's tasks are not done" })) // surface:mcp
          .input(z.object({}).optional())
          // The "member" rule has confirmed the caller's membership of the session's active organization.
          .handler(({ context }) => context.db.query.task.count({ where: { orgId: String(context.session!.activeOrganizationId), done: false } })),
      { permission: "member" },
    );
}

/** PostgreSQL at DATABASE_URL (needs `npm install pg`). */
function postgres(connectionString: string): AppOptions["db"] {
  return {
    kind: "postgres",
    dialect: postgresDialect({ connectionString }),
    // Live queries across replicas, through LISTEN/NOTIFY.
    live: postgresLive({ connectionString }), // surface:live
  };
}

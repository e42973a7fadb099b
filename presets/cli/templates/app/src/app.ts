import { z } from "zod";
import { App, mcp, type AppOptions } from "trellis"; // surface:mcp
import { App, type AppOptions } from "trellis"; // surface:-mcp
import { embedded } from "trellis/embedded";
import { TrellisError } from "trellis/kernel";
import { postgresDialect, postgresLive } from "trellis/db"; // surface:live
import { postgresDialect } from "trellis/db"; // surface:-live
import { memoryStorage } from "trellis/storage"; // surface:files
import { v1 } from "./schema.js";

export interface AppInput {
  /** @default PostgreSQL at DATABASE_URL when set, else the embedded database in DATA_DIR (./.data) */
  db?: AppOptions["db"];
  /** @default AUTH_SECRET */
  secret?: string;
}

/**
 * __APP_TITLE__: signed-in users keep private notes. A function, so tests run it on a fresh
 * in-memory database (`testApp(createApp)` in test/app.test.ts) and the CLI loads it from
 * package.json's `main`.
 */
export default function createApp(input: AppInput = {}) {
  const { DATABASE_URL, DATA_DIR, AUTH_SECRET, APP_BASE_URL } = process.env;
  const secret = input.secret ?? AUTH_SECRET;
  if (!secret) throw new TrellisError("AUTH_SECRET_MISSING", "AUTH_SECRET is not set: copy .env.example to .env, or run `trellis new` again to generate one.");
  const db = input.db ?? (DATABASE_URL ? postgres(DATABASE_URL) : embedded({ dataDir: DATA_DIR ?? ".data" }));
  return new App({ name: "__APP_TITLE__", baseUrl: APP_BASE_URL ?? "http://localhost:3000", db }) // surface:-files
  return new App({ name: "__APP_TITLE__", baseUrl: APP_BASE_URL ?? "http://localhost:3000", db, storage: memoryStorage() }) // surface:files
    .schema(v1)
    .auth({ secret, emailAndPassword: { enabled: true } })
    // Each user sees and changes only their own notes; the owner is set from the session on create.
    .resource("note", {
      ownerColumn: "ownerId",
      permissions: { list: "owner", get: "owner", create: "authenticated", update: "owner", delete: "owner" },
      readonly: ["createdAt", "updatedAt"],
      live: true, // surface:live
    })
    .openapi() // surface:openapi
    .mcp() // surface:mcp
    .files({ permissions: { upload: "authenticated", list: "owner", get: "owner", delete: "owner" } }) // surface:files
    .admin({ firstAdminEmail: process.env.ADMIN_EMAIL }) // surface:admin
    .procedure(
      "note.count",
      (base) =>
        base
          .meta(mcp.tool({ description: "How many notes the caller has" })) // surface:mcp
          .input(z.object({}).optional())
          .handler(({ context }) => context.db.query.note.count({ where: { ownerId: context.user!.id } })),
      { permission: "authenticated" },
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

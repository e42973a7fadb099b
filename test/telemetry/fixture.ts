import { z } from "zod";
import { schema } from "../../kernel/schema/index.js";
import { memoryStorage } from "../../kernel/storage/index.js";
import { RpcError, type Logger } from "../../kernel/index.js";
import { App, type AppOptions } from "../../presets/trellis.js";
import { ORIGIN } from "../support/auth.js";

export const SECRET = "a-test-secret-that-is-long-enough-0123456789";

export const v1 = schema("1")
  .auth()
  .table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text(), authorId: t.text().nullable() }))
  .files()
  .build();

/** Request lines as the app logs them. */
export function captureLogger(lines: Record<string, unknown>[]): Logger {
  const log = (fields: object | string) => void lines.push(typeof fields === "string" ? { msg: fields } : { ...fields });
  const logger: Logger = { info: log, warn: log, error: log, child: () => logger };
  return logger;
}

/**
 * An app that reads, writes and uploads: resources, files on memory storage, and `post.publish`
 * doing all three in one procedure (with a span of its own through `context.telemetry`).
 */
export function observedApp(db: AppOptions["db"], options: Partial<AppOptions> = {}) {
  return new App({ baseUrl: ORIGIN, db, storage: memoryStorage(), onError: () => {}, ...options })
    .schema(v1)
    .auth({ secret: SECRET, emailAndPassword: { enabled: true } })
    .resource("post", { ownerColumn: "authorId", permissions: { list: "public", get: "public", create: "authenticated", update: "owner", delete: "owner" }, live: true })
    .files({ maxBytes: 1024 * 1024 })
    .procedure("post.publish", (base) =>
      base.input(z.object({ title: z.string() })).handler(async ({ input, context }) => {
        const existing = await context.db.selectFrom("post").select("id").where("title", "=", input.title).execute();
        const row = await context.db.insertInto("post").values({ title: input.title }).returningAll().executeTakeFirstOrThrow();
        await context.telemetry!.span("post.render", async (span) => {
          span?.setAttribute("post.id", row.id);
          await context.storage!.set(`rendered/${row.id}`, new TextEncoder().encode(`<h1>${input.title}</h1>`));
        });
        return { ...row, duplicates: existing.length };
      }),
    )
    .procedure("post.fail", (base) =>
      base.input(z.object({ kind: z.enum(["missing", "bug"]) })).handler(({ input }) => {
        if (input.kind === "missing") throw new RpcError("NOT_FOUND", { message: "No such post" });
        throw new Error("a bug with a secret value inside");
      }),
    );
}

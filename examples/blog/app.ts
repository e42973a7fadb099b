import { z } from "zod";
import { App, mcp, type AppOptions } from "trellis";
import { memoryStorage } from "trellis/storage";
import { v1, v2, v3, v4 } from "./schema.js";
import { authSecret } from "./secret.js";

/**
 * The blog: anyone reads published posts, signed-in users write them (drafts first), and only the
 * author sees their drafts, edits or deletes their own. Built as a function so tests can run it on an in-memory database.
 */
export function createBlog(db: AppOptions["db"], options: Partial<AppOptions> = {}) {
  const baseUrl = options.baseUrl ?? process.env.APP_BASE_URL ?? "http://localhost:3000";
  // Files live in memory unless a store is given (server.ts keeps them on disk).
  const blog = new App({ name: "Trellis Blog", baseUrl, db, storage: memoryStorage(), ...options })
    .schema(v1)
    .schema(v2)
    .schema(v3)
    .schema(v4)
    .auth({ secret: authSecret(), emailAndPassword: { enabled: true } })
    // Email verification, password reset and change of email. SMTP_URL (smtp://user:pass@host:587)
    // in production; without it, in development, messages land in the database's outbox, their
    // links are printed to the log and GET /_mail/latest?to=<address> shows the latest one.
    .mail({ transport: process.env.SMTP_URL, from: process.env.MAIL_FROM ?? "Trellis Blog <no-reply@localhost>" })
    .resource("post", {
      ownerColumn: "authorId",
      permissions: {
        // Drafts are their author's: anyone else lists only published posts (the rule's `where` is
        // ANDed into every list, live streams included), and gets a draft as 403.
        list: ({ context }) => (context.user ? { OR: [{ status: "published" }, { authorId: context.user.id }] } : { status: "published" }),
        get: ({ context, row }) => row?.status !== "draft" || row.authorId === context.user?.id,
        create: "authenticated",
        update: "owner",
        delete: "owner",
      },
      includable: ["comments"],
      readonly: ["createdAt", "updatedAt"],
      // post.live: the list as a stream of snapshots (curl -N, or the typed client's async iterator).
      live: true,
    })
    .resource("comment", {
      ownerColumn: "authorId",
      permissions: { list: "public", get: "public", create: "authenticated", update: "owner", delete: "owner" },
      readonly: ["createdAt", "updatedAt"],
    })
    // The admin API and the dashboard at /_admin. ADMIN_EMAIL names the first admin: whoever signs
    // up with that address gets the "admin" role while nobody holds it (no default password, ever).
    .admin({ firstAdminEmail: process.env.ADMIN_EMAIL })
    // Images on posts: anyone sees them, signed-in authors upload them and attach them to their own
    // posts (attaching asks post's update rule, "owner"), and only the uploader deletes one.
    .files({
      accept: ["image/*"],
      maxBytes: 5 * 1024 * 1024,
      permissions: { upload: "authenticated", list: "public", get: "public", delete: "owner" },
      // Two sizes of each image, made on first request and kept beside it, in AVIF or WebP where the
      // browser takes them: /files/<id>?variant=thumb. Set FILES_SIGNING_KEY in the secrets for signed URLs.
      images: { variants: { thumb: { width: 320, height: 320, fit: "cover" }, large: { width: 1600 } } },
    })
    .procedure("me", (base) => base.handler(({ context }) => ({ id: context.user!.id, email: context.user!.email })), {
      permission: "authenticated",
    })
    .procedure("post.publish", (base) =>
      base.input(z.object({ id: z.number().int() })).handler(async ({ input, context }) => {
        const post = await context.db
          .updateTable("post")
          .set({ status: "published" })
          .where("id", "=", input.id)
          .where("authorId", "=", context.user!.id)
          .returning(["id", "status"])
          .executeTakeFirst();
        return post ?? null;
      }),
      { permission: "authenticated" },
    )
    // Published posts holding every word (full-text, best match first): a tool for MCP clients, and
    // POST /rpc/post/search and POST /rest/post/search like any procedure. Lists search too:
    // GET /rest/post?search=words, under the list rule (drafts stay their author's).
    .procedure("post.search", (base) =>
      base
        .meta(mcp.tool({ description: "Search published blog posts for words in their title or body, best match first", annotations: { readOnlyHint: true } }))
        .input(z.object({ query: z.string().min(1).max(500).describe("Words to look for"), take: z.number().int().min(1).max(50).optional().describe("At most this many posts (default 10)") }))
        .handler(({ input, context }) =>
          context.db.query.post.findMany({ where: { status: "published" }, search: input.query, take: input.take ?? 10 }),
        ),
    )
    // A chat room beside each post, with who is reading it: anyone joins (messages and presence),
    // signed-in readers talk, and new comments on the post arrive as `change` events (comments are
    // public, like the room). Over the socket at /channels (or GET /channels/sse?channel=post:1);
    // client.channel("post:1").on("chat", fn), .send("chat", { text }), .track({ name }).
    .channels({
      "post:{postId}": {
        join: "public",
        send: "authenticated",
        presence: { maxKeys: 500 },
        events: { chat: z.object({ text: z.string().min(1).max(2_000) }), typing: z.object({ typing: z.boolean() }) },
        changes: { table: "comment", columns: ["id", "postId", "authorId", "body", "createdAt"] },
      },
    })
    // GET /rest/post, GET /rest/post/{id}, ... with the document at /openapi.json and a reference at /docs.
    .openapi()
    .mcp({ instructions: "Trellis Blog: search published posts with post_search." })
    .route("GET", "/", async (_event, context) => {
      const posts = await context.db.query.post.count({ where: { status: "published" } });
      return { name: "Trellis Blog", publishedPosts: posts, signedIn: context.user !== null };
    });
  // Expired sessions are deleted at the top of every hour, on one replica whatever their number.
  // Jobs live in PostgreSQL (the embedded one or a server), so a blog on SQLite goes without.
  if (db.kind !== "postgres") return blog;
  return blog.cron("session.cleanup", "0 * * * *", async ({ context, logger }) => {
    const removed = await context.db.deleteFrom("session").where("expiresAt", "<", new Date()).executeTakeFirst();
    logger?.info({ removed: Number(removed.numDeletedRows) }, "expired sessions removed");
  }) as unknown as typeof blog;
}

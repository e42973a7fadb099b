import { z } from "zod";
import { App, type AppOptions } from "trellis";
import { schema } from "trellis/schema";
import { memoryStorage } from "trellis/storage";

const v1 = schema("1")
  .auth()
  .table("note", (t) => ({ id: t.serial().primaryKey(), text: t.text(), authorId: t.text().nullable() }))
  .files()
  .build();

export interface ObservedAppOptions {
  db: AppOptions["db"];
  /** The bearer token Prometheus scrapes `/metrics` with. */
  metricsToken: string;
  secret: string;
}

/**
 * A small app with traces and metrics on: notes (a resource), file uploads, and `note.search`, a
 * procedure that adds a span and a metric of its own through `context.telemetry`.
 */
export function createObservedApp(options: ObservedAppOptions) {
  return new App({
    name: "observed",
    db: options.db,
    storage: memoryStorage(),
    // Traces follow whatever SDK is registered; metrics at /metrics for the token or an admin.
    telemetry: { userId: true, metrics: { token: options.metricsToken } },
  })
    .schema(v1)
    .auth({ secret: options.secret, emailAndPassword: { enabled: true } })
    .resource("note", { ownerColumn: "authorId", permissions: { list: "public", get: "public", create: "authenticated", update: "owner", delete: "owner" } })
    .files()
    .procedure("note.search", (base) =>
      base.input(z.object({ text: z.string().min(1) })).handler(({ input, context }) =>
        // A span of the app's own, under the procedure's: it joins the request's trace.
        context.telemetry!.span("note.search.rank", async (span) => {
          const rows = await context.db.selectFrom("note").selectAll().where("text", "like", `%${input.text}%`).limit(20).execute();
          span?.setAttribute("note.matches", rows.length);
          return rows;
        }),
      ),
    );
}

import { z } from "zod";
import { RpcError, type AppDatabase, type AppRpcContext, type ProcedureBase } from "../../kernel/index.js";
import type { MailRow, MailRows } from "./outbox.js";

export interface MailAdminDeps {
  rows: MailRows;
  db: AppDatabase<any>;
  /** The auth instance, once the app is ready (undefined without `.auth()`). */
  auth: () => { api: Record<string, any> } | undefined;
}

/** A message as the admin API lists it: no bodies (`get` has them). */
export type MailSummary = Omit<MailRow, "text" | "html">;

/**
 * `_admin.mail.*`, mounted by the admin plugin behind its role check (401 signed out, 403 without
 * a role): the recent messages with their state and link, one message in full, and a password
 * reset sent to a user (the same message as the user asking for it themselves).
 */
/** What `_admin.mail` holds (mounted when the app has `.admin()`); `.mail()` adds it to the app's router type. */
export type AdminMailRouter = ReturnType<ReturnType<typeof mailAdminSection>>;

export function mailAdminSection(deps: MailAdminDeps) {
  return (gated: ProcedureBase<AppRpcContext>) => ({
    outbox: gated
      .input(z.object({ to: z.string().optional(), state: z.enum(["queued", "sent", "failed"]).optional(), take: z.number().int().min(1).max(200).optional() }).optional())
      .handler(async ({ input }): Promise<MailSummary[]> =>
        (await deps.rows.list({ to: input?.to, state: input?.state, take: input?.take ?? 50 })).map(({ text: _text, html: _html, ...summary }) => summary),
      ),
    get: gated.input(z.object({ id: z.string() })).handler(async ({ input }): Promise<MailRow> => {
      const row = await deps.rows.get(input.id);
      if (!row) throw new RpcError("NOT_FOUND", { message: `No message ${input.id}` });
      return row;
    }),
    sendPasswordReset: gated
      .input(z.object({ userId: z.string().min(1), redirectTo: z.string().optional() }))
      .handler(async ({ input }): Promise<{ sent: true; to: string }> => {
        const auth = deps.auth();
        if (!auth) throw new RpcError("BAD_REQUEST", { message: "Password resets need .auth() with emailAndPassword enabled" });
        const user = (await deps.db.selectFrom("user").select(["email"]).where("id", "=", input.userId).executeTakeFirst()) as { email: string } | undefined;
        if (!user) throw new RpcError("NOT_FOUND", { message: `No user ${input.userId}` });
        await auth.api.requestPasswordReset({ body: { email: user.email, ...(input.redirectTo ? { redirectTo: input.redirectTo } : {}) } });
        return { sent: true, to: user.email };
      }),
  });
}

import { TrellisError, definePlugin, missingPeers, type AppPlugin, type PluginContext } from "../../kernel/index.js";
import { mailAdminSection } from "./admin.js";
import { wireAuthFlows, type AuthOptionsService } from "./auth-flows.js";
import { Delivery } from "./delivery.js";
import { MAIL_BAD_OPTION, MAIL_BAD_TRANSPORT, MAIL_PEER_MISSING, MAIL_TRANSPORT_MISSING } from "./errors.js";
import { mailLimiter, type MailLimiter } from "./limits.js";
import { createMailer, type Mailer } from "./mailer.js";
import { resolveMail, type MailConfig } from "./options.js";
import { createMailTable, MailRows } from "./outbox.js";
import { outboxRoute } from "./outbox-route.js";
import { Unrecorded } from "./unrecorded.js";
import { factorNotices, wireNotices } from "./notices.js";
import { PendingWork } from "./pending-work.js";
import { createDeviceTable } from "./known-devices.js";
import { jobsQueue, processQueue, type JobsLike, type MailQueue } from "./queue.js";
import { MAIL_KINDS } from "./templates.js";
import { NODEMAILER, openTransport, type OpenTransport } from "./transports.js";

export type { MailConfig, MailMessage, MailTransport, OutgoingMail, MailAuthOptions, MailLimits, MailNotices } from "./options.js";
export type { Mailer } from "./mailer.js";
export type { MailKind, MailTemplate, MailTemplateData, RenderedMail, FactorChange } from "./templates.js";
export type { MailRow, MailState } from "./outbox.js";
export type { AdminMailRouter, MailSummary } from "./admin.js";
export { defaultTemplate } from "./templates.js";
export { escapeHtml } from "../../kernel/index.js";

declare module "../../kernel/index.js" {
  interface AppServices {
    /** Queues email; also `context.mail`. */
    mail: Mailer;
  }
}

/**
 * Email: the `mail` service, the auth library's email flows (verification, password reset, change
 * of email, sign-in by link or code) wired through the auth plugin's `auth-options` service, the
 * abuse limits, the security notices (and, with `factorChanged`, the `factor-notices` service the
 * admin plugin tells of its own writes to a user's factors), and `_admin.mail.*` through the admin
 * plugin's sections. Stage `feature`, after auth (it extends the library's options before the
 * library exists) and after jobs (it defines its job there), before admin (which mounts its section).
 */
export function mailPlugin(config: MailConfig): AppPlugin {
  const resolved = resolveMail(config ?? ({} as MailConfig));
  let transport: OpenTransport | undefined;
  let queue: MailQueue | undefined;
  let limiter: MailLimiter | undefined;
  return definePlugin({
    name: "mail",
    stage: "feature",
    optionalDependencies: ["auth", "jobs", "telemetry"],
    validate(ctx) {
      const problems = checkConfig(config, resolved, ctx);
      if (problems.length === 1) throw problems[0];
      if (problems.length > 1) {
        throw new TrellisError(problems[0]!.code, problems.map((problem) => problem.message).join("; "), { plugin: "mail", hook: "validate", cause: problems });
      }
    },
    build(ctx) {
      const { db, kind, name } = ctx.resources;
      const rows = new MailRows(db);
      const report = (error: unknown) => ctx.report(error, "route");
      const notices = ctx.plugins.includes("auth") && (resolved.notices.newSignIn || resolved.notices.factorChanged) ? resolved.notices : undefined;
      ctx.hooks.migrated.tap(async () => {
        await createMailTable(db, kind);
        if (notices?.newSignIn) await createDeviceTable(db, kind);
      });
      ctx.hooks.ready.tap(async () => void (transport = await openTransport(resolved.transport, ctx.logger)));
      const auth = resolved.auth && ctx.plugins.includes("auth") ? resolved.auth : false;
      // Filled when the auth library's options are assembled (wireAuthFlows), before the first request.
      const sending = auth ? new Set<string>() : undefined;
      if (sending && resolved.limits) limiter = mailLimiter(resolved.limits, sending, report);
      const telemetry = ctx.want("telemetry");
      const unrecorded = new Unrecorded();
      const delivery = new Delivery({ rows, transport: () => transport!, from: resolved.from, limiter, logger: ctx.logger, telemetry, recorded: (id) => unrecorded.settled(id) });
      const closing = new AbortController();
      const inProcess = processQueue(delivery, { retries: resolved.retries, retryDelayMs: resolved.retryDelayMs, failed: report, closing: closing.signal, telemetry });
      const jobs = ctx.want("jobs") as JobsLike | undefined;
      queue = jobs ? jobsQueue(jobs, delivery, inProcess, report) : inProcess;
      const tracked = unrecorded.track(() => queue!);
      // A notice's device lookup runs after its sign-in answered: flush() and close() wait for it too.
      const noticeWork = new PendingWork();
      const settled = { push: tracked.push, idle: async () => (await noticeWork.idle(), await tracked.idle()) };
      const mailer = createMailer(name, config.templates ?? {}, () => settled);
      ctx.provide("mail", mailer, { context: true });
      ctx.provide("admin-section:mail", mailAdminSection({ rows, db, auth: () => ctx.want("auth") as { api: Record<string, any> } | undefined }));
      if (auth) wireAuthFlows(ctx.need("auth-options") as AuthOptionsService, mailer, auth, sending);
      if (notices) {
        const deps = { mailer, db, work: noticeWork, failed: report };
        wireNotices(ctx.need("auth-options") as AuthOptionsService, notices, deps);
        // For the admin plugin's own writes to a user's factors, which no library hook sees.
        if (notices.factorChanged) ctx.provide("factor-notices", factorNotices(deps));
      }
      ctx.hooks.close.tap(async () => {
        closing.abort();
        // Messages already queued get a moment to leave; a stuck server does not hold the close.
        await Promise.race([settled.idle(), new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
        transport?.close();
        limiter?.close();
      });
      const devOutbox = resolved.transport.kind === "outbox" && resolved.outboxRoute;
      return {
        middleware: limiter ? [limiter.middleware] : [],
        routes: devOutbox ? [outboxRoute(devOutbox, rows, unrecorded)] : [],
      };
    },
  });
}

function checkConfig(config: MailConfig | undefined, resolved: ReturnType<typeof resolveMail>, ctx: PluginContext): TrellisError[] {
  const problems: TrellisError[] = [];
  const fail = (code: string, message: string) => problems.push(new TrellisError(code, message, { plugin: "mail", hook: "validate" }));
  const transport = resolved.transport;
  if (transport.kind === "missing") {
    fail(MAIL_TRANSPORT_MISSING, `.mail() needs a transport in production: pass transport: process.env.SMTP_URL (smtp://user:pass@host:587), or "outbox" to keep messages in the database on purpose`);
  }
  if (transport.kind === "bad") fail(MAIL_BAD_TRANSPORT, `.mail() transport must be an smtp:// or smtps:// URL, "outbox", or an object with send(message); got ${describe(transport.value)}`);
  if (transport.kind === "smtp") {
    try {
      new URL(transport.url);
    } catch {
      fail(MAIL_BAD_TRANSPORT, ".mail() transport is not a valid URL (percent-encode special characters in the user and password)");
    }
    if (missingPeers([NODEMAILER]).length > 0) fail(MAIL_PEER_MISSING, `The SMTP transport needs the optional package "${NODEMAILER}": npm install ${NODEMAILER}`);
  }
  if (typeof config?.from !== "string" || !/@/.test(config.from) || /[\r\n]/.test(config.from)) {
    fail(MAIL_BAD_OPTION, `.mail() needs from: the sender's address, e.g. "Acme <no-reply@example.com>"; got ${describe(config?.from)}`);
  }
  if (resolved.limits) {
    for (const key of ["perAddress", "perClient"] as const) {
      const value = resolved.limits[key];
      if (!Number.isInteger(value) || value < 1) fail(MAIL_BAD_OPTION, `.mail() limits.${key} must be a whole number above 0, got ${describe(value)}`);
    }
  }
  for (const [kind, template] of Object.entries(config?.templates ?? {})) {
    if (!(MAIL_KINDS as string[]).includes(kind)) fail(MAIL_BAD_OPTION, `.mail() templates.${kind} is not a message kind (${MAIL_KINDS.join(", ")})`);
    else if (typeof template !== "function") fail(MAIL_BAD_OPTION, `.mail() templates.${kind} must be a function returning { subject, text, html }`);
  }
  for (const [key, value] of Object.entries(config?.notices ?? {})) {
    if (key !== "newSignIn" && key !== "factorChanged") fail(MAIL_BAD_OPTION, `.mail() notices.${key} is not a notice (newSignIn, factorChanged)`);
    else if (typeof value !== "boolean") fail(MAIL_BAD_OPTION, `.mail() notices.${key} must be true or false, got ${describe(value)}`);
  }
  if ((resolved.notices.newSignIn || resolved.notices.factorChanged) && !ctx.plugins.includes("auth")) {
    fail(MAIL_BAD_OPTION, ".mail() notices (newSignIn, factorChanged) need .auth()");
  }
  const flows = config?.auth;
  if (flows && !ctx.plugins.includes("auth") && (flows.requireEmailVerification || flows.magicLink || flows.emailOtp)) {
    fail(MAIL_BAD_OPTION, ".mail() auth flows (requireEmailVerification, magicLink, emailOtp) need .auth()");
  }
  if (flows && flows.requireEmailVerification && flows.verifyEmail === false) {
    fail(MAIL_BAD_OPTION, ".mail() auth.requireEmailVerification needs auth.verifyEmail: nobody could ever verify");
  }
  if (!Number.isInteger(resolved.retries) || resolved.retries < 0) fail(MAIL_BAD_OPTION, `.mail() retries must be a whole number, 0 or more, got ${describe(resolved.retries)}`);
  return problems;
}

function describe(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value.replace(/\/\/[^@/]*@/, "//***@")) : String(value);
}

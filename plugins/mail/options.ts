import { processEnv, type RateLimitStore } from "../../kernel/index.js";
import type { MailTemplate, MailKind } from "./templates.js";

/** A message as the app hands it to `context.mail.send()`. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

/** A message as a transport receives it: the sender filled in. */
export interface OutgoingMail extends MailMessage {
  from: string;
}

/** Anything that can deliver a message (a test double, an HTTP mail API). Throwing means "not sent". */
export interface MailTransport {
  send(message: OutgoingMail): Promise<void>;
}

export interface MailAuthOptions {
  /**
   * Sends a verification link on sign-up (and `POST /api/auth/send-verification-email` resends it).
   * @default true
   */
  verifyEmail?: boolean;
  /**
   * Refuses sign-in (403) until the address is verified.
   * @default false
   */
  requireEmailVerification?: boolean;
  /**
   * Change of email (`POST /api/auth/change-email`), confirmed from the old address when it is verified.
   * @default true
   */
  changeEmail?: boolean;
  /**
   * Sign-in by link (`POST /api/auth/sign-in/magic-link`), better-auth's magic-link plugin.
   * @default false
   */
  magicLink?: boolean;
  /**
   * Sign-in by one-time code (`POST /api/auth/email-otp/send-verification-otp`), better-auth's email-OTP plugin.
   * @default false
   */
  emailOtp?: boolean;
  /**
   * Where the reset link lands when the request named no `redirectTo`: the page of the app that
   * asks for the new password; it receives `?token=...`.
   * @default the auth pages' reset page ("/auth/reset-password"), or "/" with `.auth({ pages: false })`
   */
  resetPasswordPage?: string;
}

/** The flows with their defaults; the reset landing stays open until the auth pages are known. */
export type MailAuthFlows = Required<Omit<MailAuthOptions, "resetPasswordPage">> & Pick<MailAuthOptions, "resetPasswordPage">;

/**
 * Security notices to a user about their own account, after the fact. Each is off unless turned
 * on, and each is a replaceable template (`new-sign-in`, `factor-changed`).
 */
export interface MailNotices {
  /**
   * Mails the user when they sign in (by any method) from a browser or device not seen before for
   * them: its user agent with the version numbers left out, and the client address's network
   * (IPv4 /16, IPv6 /48), kept as a keyed hash per user, the last 20. The first one a user is seen
   * with (their sign-up, or their first sign-in after notices are turned on) is remembered without
   * a notice.
   * @default false
   */
  newSignIn?: boolean;
  /**
   * Mails the user when their password is changed or reset, two-factor sign-in is turned on or
   * off, or a passkey is added or removed.
   * @default false
   */
  factorChanged?: boolean;
}

export interface MailLimits {
  /**
   * Auth messages (verification, reset, sign-in links) to one address per hour; beyond it the
   * message is dropped and logged, and the request answers as usual (no account discovery).
   * @default 5
   */
  perAddress?: number;
  /**
   * Requests to the auth endpoints that send mail, per client address per hour; beyond it 429.
   * @default 20
   */
  perClient?: number;
  /**
   * The counter store; `redisRateLimitStore()` from `trellis/redis` shares the counts between replicas.
   * @default an in-process counter
   */
  store?: RateLimitStore;
}

export interface MailConfig {
  /**
   * `smtp://user:pass@host:587` (or `smtps://`), `"outbox"` (stored in the app's database, links
   * printed to the log), or an object with `send(message)`.
   * @default "outbox" outside production; required when NODE_ENV is "production"
   */
  transport?: string | MailTransport;
  /** The sender, e.g. `"Acme <no-reply@example.com>"`. */
  from: string;
  /** Replaces the built-in template of a message kind. */
  templates?: Partial<Record<MailKind, MailTemplate>>;
  /** Which auth flows send mail (needs `.auth()`); `false` wires none. */
  auth?: MailAuthOptions | false;
  /** Security notices about a user's own account (needs `.auth()`): new sign-ins, changed factors. */
  notices?: MailNotices;
  /** Abuse limits on the auth flows; `false` turns them off. */
  limits?: MailLimits | false;
  /**
   * Attempts after the first failed one, in process (the jobs plugin, when on, retries instead).
   * @default 2
   */
  retries?: number;
  /**
   * Wait before the n-th retry: n times this many milliseconds.
   * @default 2000
   */
  retryDelayMs?: number;
  /**
   * With the outbox outside production, `GET <path>?to=<address>` answers the latest message to
   * that address (link included), to loopback callers only; `false` mounts nothing.
   * @default "/_mail/latest"
   */
  outboxRoute?: string | false;
}

export interface ResolvedMail {
  transport: { kind: "outbox" } | { kind: "smtp"; url: string } | { kind: "custom"; transport: MailTransport } | { kind: "missing" } | { kind: "bad"; value: unknown };
  from: string;
  auth: MailAuthFlows | false;
  notices: Required<MailNotices>;
  limits: { perAddress: number; perClient: number; store: RateLimitStore | undefined } | false;
  retries: number;
  retryDelayMs: number;
  outboxRoute: string | false;
  production: boolean;
}

export function resolveMail(config: MailConfig): ResolvedMail {
  const production = processEnv().NODE_ENV === "production";
  const auth = config.auth === false ? false : {
    verifyEmail: true,
    requireEmailVerification: false,
    changeEmail: true,
    magicLink: false,
    emailOtp: false,
    ...config.auth,
  };
  const limits = config.limits === false ? false : { perAddress: 5, perClient: 20, store: undefined, ...config.limits };
  return {
    transport: transportOf(config.transport, production),
    from: config.from,
    auth,
    notices: { newSignIn: config.notices?.newSignIn === true, factorChanged: config.notices?.factorChanged === true },
    limits,
    retries: config.retries ?? 2,
    retryDelayMs: config.retryDelayMs ?? 2000,
    outboxRoute: production || config.outboxRoute === false ? false : (config.outboxRoute ?? "/_mail/latest"),
    production,
  };
}

function transportOf(value: MailConfig["transport"], production: boolean): ResolvedMail["transport"] {
  if (value === undefined || value === "") return production ? { kind: "missing" } : { kind: "outbox" };
  if (value === "outbox") return { kind: "outbox" };
  if (typeof value === "string") return /^smtps?:\/\//.test(value) ? { kind: "smtp", url: value } : { kind: "bad", value };
  if (value && typeof value.send === "function") return { kind: "custom", transport: value };
  return { kind: "bad", value };
}

import type { BetterAuthOptions } from "better-auth";
import { RpcError, callerBucket, errorResponse, type HttpMiddleware, type RateLimitHit, type RateLimitStore } from "../../kernel/index.js";

const HOUR = 60 * 60 * 1000;

/**
 * The auth library's core endpoints that send a message with these options, derived from the
 * sending callbacks present (each counts against the caller's hourly limit), whether this plugin
 * wired the callback or the app passed its own.
 */
export function coreSendingPaths(options: BetterAuthOptions): string[] {
  const paths: string[] = [];
  const verification = options.emailVerification;
  if (options.emailAndPassword?.sendResetPassword) paths.push("/request-password-reset");
  if (verification?.sendVerificationEmail) {
    paths.push("/send-verification-email");
    if (verification.sendOnSignUp ?? options.emailAndPassword?.requireEmailVerification) paths.push("/sign-up/email");
    if (verification.sendOnSignIn) paths.push("/sign-in/email");
  }
  // A change of email is confirmed to the old address, or verified at the new one.
  const changeEmail = options.user?.changeEmail;
  if (changeEmail?.enabled && (changeEmail.sendChangeEmailConfirmation || verification?.sendVerificationEmail)) paths.push("/change-email");
  if (options.user?.deleteUser?.sendDeleteAccountVerification) paths.push("/delete-user");
  return paths.map((path) => `/api/auth${path}`);
}

/** The auth library's plugins whose sending callbacks this plugin wires (or the app passed). */
const MAIL_PLUGINS: ReadonlySet<string> = new Set(["magic-link", "email-otp"]);

interface EndpointLike {
  path?: string;
  options?: { method?: string | readonly string[]; metadata?: { SERVER_ONLY?: boolean } };
}

/**
 * Every POST endpoint the library's mail plugins declare, read from the plugin objects rather than
 * listed here: an endpoint a later version adds (as `/email-otp/request-password-reset` and
 * `/forget-password/email-otp` were, beside `send-verification-otp`) is counted without a change
 * here. The plugins' endpoints that check a code count too, which also bounds guessing.
 */
export function pluginSendingPaths(plugins: readonly { id: string; endpoints?: Record<string, unknown> }[]): string[] {
  return plugins
    .filter((plugin) => MAIL_PLUGINS.has(plugin.id))
    .flatMap((plugin) => Object.values(plugin.endpoints ?? {}) as EndpointLike[])
    .filter((endpoint) => endpoint.path && !endpoint.options?.metadata?.SERVER_ONLY && [endpoint.options?.method].flat().includes("POST"))
    .map((endpoint) => `/api/auth${endpoint.path}`);
}

export interface MailLimiter {
  /** HTTP middleware: 429 once a client address has called the sending endpoints `perClient` times this hour. */
  middleware: HttpMiddleware;
  /** Counts one auth message to `address`; false beyond `perAddress` this hour (the message is dropped). */
  allowAddress(address: string): Promise<boolean>;
  close(): void;
}

/**
 * Both limits count in a rate-limit store, so with a shared one (`trellis/redis`) they hold across
 * replicas. The client limit counts requests, not messages: a reset for an unknown address counts
 * exactly like one for a known address, so the 429 tells nothing about accounts. A store that fails
 * lets the request and the message through (reported), as the app's own rate limit does by default.
 */
export function mailLimiter(
  limits: { perAddress: number; perClient: number; store: RateLimitStore | undefined },
  paths: Set<string>,
  report: (error: unknown) => void,
): MailLimiter {
  const owned = limits.store ? undefined : hourlyCounter();
  const store = limits.store ?? owned!;
  const hit = async (key: string): Promise<RateLimitHit | undefined> => {
    try {
      return await store.hit(key, HOUR);
    } catch (error) {
      report(error);
      return undefined;
    }
  };
  const middleware: HttpMiddleware = async (event, next) => {
    if (event.method !== "POST" || !paths.has(event.url.pathname)) return next();
    const address = callerBucket(event);
    if (!address) return next();
    const counted = await hit(`mail:client:${address}`);
    if (!counted || counted.count <= limits.perClient) return next();
    const response = errorResponse(new RpcError("TOO_MANY_REQUESTS", { message: "Too many email requests from this address; try again later" }), false);
    response.headers.set("retry-after", String(Math.max(1, Math.ceil((counted.resetAt - Date.now()) / 1000))));
    return response;
  };
  middleware.displayName = "mail:limit";
  return {
    middleware,
    allowAddress: async (address) => {
      const counted = await hit(`mail:to:${address.toLowerCase()}`);
      return !counted || counted.count <= limits.perAddress;
    },
    close: () => owned?.clear(),
  };
}

/** The default store: fixed windows in this process, expired ones dropped as they are met. */
function hourlyCounter(): RateLimitStore & { clear(): void } {
  const windows = new Map<string, RateLimitHit>();
  return {
    hit(key, windowMs) {
      const now = Date.now();
      if (windows.size > 10_000) for (const [k, w] of windows) if (w.resetAt <= now) windows.delete(k);
      let window = windows.get(key);
      if (!window || window.resetAt <= now) windows.set(key, (window = { count: 0, resetAt: now + windowMs }));
      window.count++;
      return { ...window };
    },
    clear: () => windows.clear(),
  };
}

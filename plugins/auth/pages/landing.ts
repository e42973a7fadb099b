import type { BetterAuthOptions } from "better-auth";
import type { PagesSettings } from "./options.js";

/**
 * The links Trellis sends land on the pages unless the request named its own landing: a reset link
 * on `<path>/reset-password` (with `?token=`), a verification link on `<path>/verified`, instead of
 * `/`, which a new project does not serve. A landing the request chose (`redirectTo`,
 * `callbackURL`) is kept.
 */
export function landOnPages(options: BetterAuthOptions, settings: PagesSettings): BetterAuthOptions {
  const next = { ...options };
  const reset = options.emailAndPassword?.sendResetPassword;
  if (reset) {
    next.emailAndPassword = { ...options.emailAndPassword!, sendResetPassword: (data, request) => reset({ ...data, url: landing(data.url, `${settings.path}/reset-password`) }, request) };
  }
  const verify = options.emailVerification?.sendVerificationEmail;
  if (verify) {
    next.emailVerification = { ...options.emailVerification, sendVerificationEmail: (data, request) => verify({ ...data, url: landing(data.url, `${settings.path}/verified`) }, request) };
  }
  return next;
}

/** The link with its `callbackURL` set to `page` when it had none or the library's default `/`. */
function landing(link: string, page: string): string {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    return link;
  }
  const current = url.searchParams.get("callbackURL");
  if (current && current !== "/") return link;
  url.searchParams.set("callbackURL", page);
  return url.href;
}

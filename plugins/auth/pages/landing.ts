import type { BetterAuthOptions } from "better-auth";
import type { PagesSettings } from "./options.js";

/** The pages the links land on; the mail plugin reads `resetPassword` for its reset links. */
export function landings(settings: PagesSettings) {
  return { signIn: `${settings.path}/sign-in`, resetPassword: `${settings.path}/reset-password`, verified: `${settings.path}/verified`, signedIn: `${settings.path}/signed-in` };
}

/**
 * A verification link lands on `<path>/verified` instead of `/`, which a new project does not
 * serve, unless the request chose its own `callbackURL`. (Reset links get their landing from the
 * mail plugin, which knows whether the app named its own page.)
 */
export function landOnPages(options: BetterAuthOptions, settings: PagesSettings): BetterAuthOptions {
  const verify = options.emailVerification?.sendVerificationEmail;
  if (!verify) return options;
  const page = landings(settings).verified;
  return { ...options, emailVerification: { ...options.emailVerification, sendVerificationEmail: (data, request) => verify({ ...data, url: landing(data.url, page) }, request) } };
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

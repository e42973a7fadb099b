import { escapeHtml as e } from "../../../kernel/index.js";
import { localPath, page } from "./html.js";
import type { SignInMethods } from "./methods.js";
import type { PagesSettings } from "./options.js";

/** What a failed sign-in's `?error=` code means, in words (the library's codes, lower or upper case). */
const ERRORS: Record<string, string> = {
  access_denied: "Sign-in was cancelled at the provider.",
  state_mismatch: "This sign-in was started in another browser or took too long. Start again.",
  state_not_found: "This sign-in was started in another browser or took too long. Start again.",
  account_not_linked: "An account with this email already exists. Sign in the way you did before; linking a provider needs a verified email on both sides.",
  banned: "This account is suspended.",
  invalid_code: "The provider's answer could not be used. Start again.",
  invalid_token: "This link is invalid or has expired.",
  signup_disabled: "New accounts cannot be created here.",
};

export function describeError(code: string | null): string {
  if (!code) return "Something went wrong. Start again.";
  const known = ERRORS[code.toLowerCase()];
  if (known) return known;
  if (/banned/i.test(code)) return ERRORS.banned!;
  return `Sign-in failed (${code}).`;
}

const signInLink = (settings: PagesSettings) => `<p><a href="${settings.path}/sign-in">Back to sign-in</a></p>`;

export function signInPage(settings: PagesSettings, methods: SignInMethods, url: URL): Response {
  const next = localPath(url.searchParams.get("callbackURL"));
  const parts: string[] = [];
  const error = url.searchParams.get("error");
  if (error) parts.push(`<p role="alert">${e(describeError(error))}</p>`);
  if (methods.password) {
    parts.push(`<form data-form="password">
<label>Email <input name="email" type="email" autocomplete="username webauthn" required></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit">Sign in</button>
</form>
<details><summary>Forgot your password?</summary>
<form data-form="forgot">
<label>Email <input name="email" type="email" autocomplete="email" required></label>
<button type="submit">Email me a reset link</button>
</form>
</details>`);
  }
  if (methods.magicLink) {
    parts.push(`<form data-form="magic-link">
<label>Email <input name="email" type="email" autocomplete="email" required></label>
<button type="submit">Email me a sign-in link</button>
</form>`);
  }
  const buttons = methods.providers.map((provider) => `<button type="button" data-provider="${e(provider.id)}">Continue with ${e(provider.name)}</button>`);
  if (methods.passkey) buttons.push(`<button type="button" data-passkey>Sign in with a passkey</button>`);
  if (buttons.length) parts.push(`<div class="methods">\n${buttons.join("\n")}\n</div>`);
  if (parts.length === 0) parts.push("<p>No sign-in method is configured.</p>");
  return page(settings, "Sign in", `<div data-next="${e(next)}"></div>\n${parts.join("\n")}`);
}

export function twoFactorPage(settings: PagesSettings, url: URL): Response {
  const next = localPath(url.searchParams.get("callbackURL"));
  return page(
    settings,
    "Two-factor code",
    `<div data-next="${e(next)}"></div>
<form data-form="totp">
<label>Code from your authenticator app <input name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required></label>
<label class="check"><input name="trustDevice" type="checkbox"> Trust this device for 30 days</label>
<button type="submit">Verify</button>
</form>
<details><summary>Use a backup code</summary>
<form data-form="backup-code">
<label>Backup code <input name="code" autocomplete="off" required></label>
<button type="submit">Verify</button>
</form>
</details>
${signInLink(settings)}`,
  );
}

export function resetPasswordPage(settings: PagesSettings, url: URL): Response {
  const token = url.searchParams.get("token");
  if (!token || url.searchParams.get("error")) {
    return page(settings, "Reset password", `<p role="alert">${e(describeError("invalid_token"))} Ask for a new one.</p>\n${signInLink(settings)}`);
  }
  return page(
    settings,
    "Reset password",
    `<form data-form="reset">
<input type="hidden" name="token" value="${e(token)}">
<label>New password <input name="password" type="password" autocomplete="new-password" minlength="8" required></label>
<label>Repeat it <input name="confirm" type="password" autocomplete="new-password" minlength="8" required></label>
<button type="submit">Set the new password</button>
</form>`,
  );
}

/** The landing of a link that signs in or verifies: done, or why not. */
export function landingPage(settings: PagesSettings, url: URL, title: string, done: string): Response {
  const error = url.searchParams.get("error");
  const next = localPath(url.searchParams.get("callbackURL"));
  if (error) return page(settings, title, `<p role="alert">${e(describeError(error))}</p>\n${signInLink(settings)}`);
  return page(settings, title, `<p>${e(done)}</p>\n<p><a href="${e(next)}">Continue</a></p>`);
}

export function errorPage(settings: PagesSettings, url: URL): Response {
  return page(settings, "Sign-in failed", `<p role="alert">${e(describeError(url.searchParams.get("error")))}</p>\n${signInLink(settings)}`);
}

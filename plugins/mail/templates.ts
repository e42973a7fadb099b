import { escapeHtml } from "../../kernel/index.js";

/** The messages the auth flows send, one template per kind, each replaceable through `templates`. */
export type MailKind = "verify-email" | "reset-password" | "change-email" | "magic-link" | "sign-in-code" | "organization-invitation" | "new-sign-in" | "factor-changed";

/** What a `factor-changed` notice reports. */
export type FactorChange = "password-changed" | "password-reset" | "two-factor-enabled" | "two-factor-disabled" | "passkey-added" | "passkey-removed";

/** What a template receives. Every string may come from a user: escape it in HTML (`escapeHtml`). */
export interface MailTemplateData {
  /** The app's `name` (the App option). */
  appName: string;
  /** The recipient's address. */
  to: string;
  /** The user's display name, when known. */
  name?: string;
  /** The action link (verification, reset, confirmation, sign-in). */
  link?: string;
  /** The one-time code (sign-in by code). */
  code?: string;
  /** The address being changed to (change of email). */
  newEmail?: string;
  /** The organization invited to, who invited, and as what role (organization invitation). */
  organization?: string;
  inviter?: string;
  role?: string;
  /** The browser's user agent, as it sent it (new sign-in). */
  device?: string;
  /** The client's IP address, when known (new sign-in). */
  address?: string;
  /** When it happened, as a UTC date and time (new sign-in, factor changed). */
  time?: string;
  /** What changed (factor changed). */
  factor?: FactorChange;
  /**
   * An administrator made the change, not the user (factor changed): through the admin API, the
   * auth library's admin endpoints, or while impersonating the user.
   */
  byAdmin?: boolean;
}

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

export type MailTemplate = (data: MailTemplateData) => RenderedMail;


interface Wording {
  subject: (d: MailTemplateData) => string;
  lead: (d: MailTemplateData) => string;
  action?: string;
  after: string | ((d: MailTemplateData) => string);
}

const WORDING: Record<MailKind, Wording> = {
  "verify-email": {
    subject: (d) => `Verify your email for ${d.appName}`,
    lead: (d) => `Confirm that ${d.to} is your address.`,
    action: "Verify email",
    after: "If you did not sign up, ignore this message.",
  },
  "reset-password": {
    subject: (d) => `Reset your ${d.appName} password`,
    lead: () => "Someone asked to reset the password of this account. Choose a new one:",
    action: "Reset password",
    after: "If it was not you, ignore this message: your password stays as it is. Resetting signs you out everywhere else.",
  },
  "change-email": {
    subject: (d) => `Confirm the change of your ${d.appName} email`,
    lead: (d) => `Someone asked to change this account's email to ${d.newEmail ?? "a new address"}.`,
    action: "Approve the change",
    after: "If it was not you, ignore this message and change your password.",
  },
  "magic-link": {
    subject: (d) => `Sign in to ${d.appName}`,
    lead: () => "Use this link to sign in. It works once and expires soon.",
    action: "Sign in",
    after: "If you did not ask for it, ignore this message.",
  },
  "organization-invitation": {
    subject: (d) => `${d.inviter ?? "Someone"} invited you to ${d.organization ?? "an organization"} on ${d.appName}`,
    lead: (d) => `${d.inviter ?? "Someone"} invited ${d.to} to join ${d.organization ?? "an organization"}${d.role ? ` as ${d.role}` : ""}. Sign in (or sign up) with this address, then accept or decline:`,
    action: "Open the invitation",
    after: "The invitation expires; if you did not expect it, ignore this message.",
  },
  "new-sign-in": {
    subject: (d) => `New sign-in to your ${d.appName} account`,
    lead: (d) => `Your account was signed in to from a browser or device it had not been used from before: ${d.device || "an unknown browser"}${d.address ? `, address ${d.address}` : ""}${d.time ? `, on ${d.time}` : ""}.`,
    after: "If it was you, there is nothing to do. If not, change your password now and sign out your other sessions.",
  },
  "factor-changed": {
    subject: (d) => `Your ${d.appName} sign-in settings changed`,
    lead: (d) => `${FACTOR_WORDS[d.factor ?? "password-changed"]} for your account${d.byAdmin ? " by an administrator" : ""}${d.time ? ` on ${d.time}` : ""}.`,
    after: (d) => d.byAdmin
      ? "If you asked for it, there is nothing to do. If not, reset your password now and tell us."
      : "If it was you, there is nothing to do. If not, reset your password now and tell us.",
  },
  "sign-in-code": {
    subject: (d) => `Your ${d.appName} code: ${d.code ?? ""}`,
    lead: (d) => `Your one-time code is ${d.code ?? ""}. It expires in a few minutes.`,
    after: "If you did not ask for it, ignore this message.",
  },
};

const FACTOR_WORDS: Record<FactorChange, string> = {
  "password-changed": "The password was changed",
  "password-reset": "The password was reset",
  "two-factor-enabled": "Two-factor sign-in was turned on",
  "two-factor-disabled": "Two-factor sign-in was turned off",
  "passkey-added": "A passkey was added",
  "passkey-removed": "A passkey was removed",
};

/** The built-in template of a kind: plain text, and HTML with every value escaped. */
export function defaultTemplate(kind: MailKind): MailTemplate {
  const wording = WORDING[kind];
  return (data) => {
    const greeting = data.name ? `Hello ${data.name},` : "Hello,";
    const lead = wording.lead(data);
    const after = typeof wording.after === "function" ? wording.after(data) : wording.after;
    const text = [greeting, "", lead, ...(data.link ? ["", data.link] : []), "", after, "", `-- ${data.appName}`].join("\n");
    const button = data.link && wording.action
      ? `<p><a href="${escapeHtml(data.link)}" style="display:inline-block;padding:10px 16px;background:#1f6feb;color:#fff;text-decoration:none;border-radius:6px">${escapeHtml(wording.action)}</a></p>\n<p style="font-size:12px;color:#555">Or open: ${escapeHtml(data.link)}</p>`
      : "";
    const html = [
      `<!doctype html><html><body style="font-family:system-ui,sans-serif;line-height:1.5">`,
      `<p>${escapeHtml(greeting)}</p>`,
      `<p>${escapeHtml(lead)}</p>`,
      button,
      `<p style="color:#555">${escapeHtml(after)}</p>`,
      `<p style="color:#555">${escapeHtml(data.appName)}</p>`,
      `</body></html>`,
    ].filter(Boolean).join("\n");
    return { subject: wording.subject(data), text, html };
  };
}

export const MAIL_KINDS = Object.keys(WORDING) as MailKind[];

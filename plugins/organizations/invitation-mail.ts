import type { OrganizationsConfig } from "./options.js";

/** The slice of the mail service an invitation needs (the mail plugin owns the rest). */
interface MailLike {
  send(message: { to: string; subject: string; text: string; html?: string }): Promise<{ id: string }>;
  render(kind: "organization-invitation", data: { to: string; link?: string; organization?: string; inviter?: string; role?: string }): { subject: string; text: string; html: string };
}

type InvitationData = Parameters<NonNullable<OrganizationsConfig["sendInvitationEmail"]>>[0];

/**
 * `sendInvitationEmail` through `.mail()`: the `organization-invitation` template (replace it with
 * `.mail({ templates })`), queued like any message (the dev outbox in development). The link is
 * `invitationUrl` with `{id}` replaced: the app's page that shows the invitation and calls
 * `POST /api/auth/organization/accept-invitation` or `reject-invitation` with `{ invitationId }`.
 */
export function invitationMail(mail: () => MailLike | undefined, invitationUrl: string) {
  return async (data: InvitationData): Promise<void> => {
    const sender = mail();
    // No .mail(): the invitation exists and can be read and accepted, but nothing is sent.
    if (!sender) return;
    const link = invitationUrl.replace("{id}", encodeURIComponent(data.id));
    const rendered = sender.render("organization-invitation", {
      to: data.email,
      link,
      organization: data.organization.name,
      inviter: data.inviter.user.name || data.inviter.user.email,
      role: data.role,
    });
    await sender.send({ to: data.email, ...rendered });
  };
}

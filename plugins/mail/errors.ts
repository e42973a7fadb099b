/** Error codes of the mail plugin (listed in docs/errors.md). */
/** Production (`NODE_ENV=production`) with no `transport`: the development outbox is never a silent default there. */
export const MAIL_TRANSPORT_MISSING = "MAIL_TRANSPORT_MISSING";
/** `transport` is neither an `smtp://`/`smtps://` URL, `"outbox"`, nor an object with `send()`. */
export const MAIL_BAD_TRANSPORT = "MAIL_BAD_TRANSPORT";
/** Another option is wrong: `from`, a limit, a template. */
export const MAIL_BAD_OPTION = "MAIL_BAD_OPTION";
/** The SMTP transport needs the optional package `nodemailer`. */
export const MAIL_PEER_MISSING = "MAIL_PEER_MISSING";
/** `context.mail.send()` was given a message without a recipient, a subject or a body. */
export const MAIL_BAD_MESSAGE = "MAIL_BAD_MESSAGE";

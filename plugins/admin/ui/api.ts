import { createClient } from "../../../presets/client.js";
import type { AdminRouter } from "../procedures.js";
import type { AdminMembership, AdminOrganization, AdminOrganizationDetail } from "../../organizations/index.js";

export type { AdminMembership, AdminOrganization, AdminOrganizationDetail };

/** The same typed client users get (`trellis/client`), pointed at this origin; the session cookie travels with it. */
export const client = createClient<{ _admin: AdminRouter }>({ url: location.origin });

export type Meta = Awaited<ReturnType<typeof client._admin.meta>>;
export type TableInfo = Meta["tables"][number];
export type Column = TableInfo["columns"][number];
export type Row = Record<string, unknown>;

/** The HTTP status of a failed call (0 for a network failure). */
export function statusOf(error: unknown): number {
  return typeof (error as { status?: unknown })?.status === "number" ? (error as { status: number }).status : 0;
}

export function messageOf(error: unknown): string {
  return (error as { message?: string })?.message || "Something went wrong";
}

/** What `signIn` resolves to when the password was right and the account asks for its second factor. */
export const TWO_FACTOR = Symbol("two-factor");

/** Signs in through the auth plugin's own endpoint; resolves to an error message, `TWO_FACTOR`, or undefined. */
export async function signIn(email: string, password: string): Promise<string | typeof TWO_FACTOR | undefined> {
  const response = await fetch("/api/auth/sign-in/email", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
  });
  const body = (await response.json().catch(() => ({}))) as { message?: string; twoFactorRedirect?: boolean };
  if (response.ok) return body.twoFactorRedirect ? TWO_FACTOR : undefined;
  return body.message || `Sign-in failed (${response.status})`;
}

/** The second step of a two-factor sign-in: a code from the authenticator app, or a backup code. */
export async function verifyCode(code: string): Promise<string | undefined> {
  const backup = !/^\d{6}$/.test(code);
  const response = await fetch(`/api/auth/two-factor/${backup ? "verify-backup-code" : "verify-totp"}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ code }),
  });
  if (response.ok) return undefined;
  const body = (await response.json().catch(() => ({}))) as { message?: string };
  return body.message || `Verification failed (${response.status})`;
}

export async function signOut(): Promise<void> {
  await fetch("/api/auth/sign-out", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
}

/** A message as `_admin.mail.outbox` lists it. */
export interface MailSummary {
  id: string;
  kind: string;
  to: string;
  subject: string;
  link: string | null;
  transport: string;
  state: "queued" | "sent" | "failed";
  attempts: number;
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * `_admin.mail.*`, served when the app has `.mail()` (its section of `_admin`). Typed here by its
 * shape: the admin plugin does not import the mail plugin's files. The same client makes the calls.
 */
export const mailAdmin = (client as unknown as {
  _admin: {
    mail: {
      outbox(input: { take?: number }): Promise<MailSummary[]>;
      sendPasswordReset(input: { userId: string }): Promise<{ sent: true; to: string }>;
    };
  };
})._admin.mail;

/** A job as `_admin.jobs.*` lists it. */
export interface JobSummary {
  id: string;
  queue: string;
  state: "created" | "retry" | "active" | "completed" | "cancelled" | "failed";
  data: unknown;
  attempts: number;
  maxAttempts: number;
  error: string | null;
  createdAt: Date;
  startedAt: Date | null;
  completedAt: Date | null;
}

/** A queue as `_admin.jobs.queues` lists it. */
export interface QueueSummary {
  name: string;
  kind: "job" | "cron";
  cron: string | null;
  tz: string | null;
  counts: Record<JobSummary["state"], number>;
}

/**
 * `_admin.jobs.*`, served when the app has `.jobs()` (its section of `_admin`). Typed here by its
 * shape, as the mail section is: the admin plugin does not import the jobs plugin's files.
 */
export const jobsAdmin = (client as unknown as {
  _admin: {
    jobs: {
      queues(): Promise<QueueSummary[]>;
      failed(input: { queue?: string; take?: number }): Promise<JobSummary[]>;
      retry(input: { queue: string; id: string }): Promise<JobSummary>;
    };
  };
})._admin.jobs;

/** An entry as `_admin.audit.list` answers it. */
export interface AuditEntrySummary {
  id: string;
  at: string;
  table: string;
  key: string | null;
  op: "insert" | "update" | "delete";
  actor: { kind: string; userId: string | null; impersonatorId: string | null };
  source: string | null;
  changed: string[];
  before: Row | null;
  after: Row | null;
}

/** `_admin.audit.*`, served when the app has `.audit()`; typed by its shape, as the jobs section is. */
export const auditAdmin = (client as unknown as {
  _admin: {
    audit: {
      list(input: { table?: string; key?: string; actor?: string; take?: number; cursor?: string }): Promise<{ entries: AuditEntrySummary[]; nextCursor: string | null }>;
      restore(input: { id: string }): Promise<{ row: Row }>;
    };
  };
})._admin.audit;

/** What `_admin.channels.list` answers: this process's connections and channels, and its message counters. */
export interface ChannelStatsSummary {
  transport: "local" | "redis" | "postgres";
  connections: number;
  published: number;
  delivered: number;
  channels: Array<{ channel: string; members: number; presence: number }>;
}

/** `_admin.channels.*`, served when the app has `.channels()`; typed by its shape, as the jobs section is. */
export const channelsAdmin = (client as unknown as {
  _admin: { channels: { list(): Promise<ChannelStatsSummary> } };
})._admin.channels;

/** `_admin.organizations.*`, served when the app has organizations; typed by its shape, as the audit section is. */
export const organizationsAdmin = (client as unknown as {
  _admin: { organizations: AdminOrganizationsRouterClient };
})._admin.organizations;

type AdminOrganizationsRouterClient = {
  list(input: { take?: number; skip?: number }): Promise<{ data: AdminOrganization[]; count: number }>;
  get(input: { id: string }): Promise<AdminOrganizationDetail>;
  memberships(input: { userId: string }): Promise<AdminMembership[]>;
  setRoles(input: { memberId: string; roles: string[] }): Promise<{ id: string; roles: string[] }>;
  removeMember(input: { memberId: string }): Promise<{ removed: true }>;
  cancelInvitation(input: { id: string }): Promise<{ id: string; status: "canceled" }>;
  delete(input: { id: string }): Promise<{ deleted: true }>;
};

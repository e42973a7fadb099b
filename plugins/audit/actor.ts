import { carriesCredential, requestInScope, type RequestEvent, type SessionState } from "../../kernel/index.js";

/** The host of the request-less events jobs run with (plugins/jobs builds them at this address). */
const JOB_PREFIX = "http://trellis.internal/jobs/";

/**
 * Who is writing, as the database's triggers read it (the JSON in `trellis.audit`): the signed-in
 * user, an API key's user, a job, an anonymous caller, or nobody (`""`: the system, such as a seed
 * or a migration, recorded as `system`).
 */
export interface AuditActor {
  kind: "user" | "apiKey" | "job" | "anonymous";
  userId: string | null;
  /** The administrator behind an impersonated session (`session.impersonatedBy`). */
  impersonatorId: string | null;
  requestId: string;
  /** The surface: `rpc`, `rest`, `mcp`, `admin` (`_admin.*`), `auth`, `route`, `client` (`app.client()`) or `job`. */
  source: string;
  job: string | null;
  /**
   * The caller's organization: the session's `activeOrganizationId` when the auth library's
   * organization plugin sets one (for a job, the organization it was sent in), else null. The one
   * place an organization enters the log.
   */
  organizationId: string | null;
}

/** An event's actor, once its session is known (a pending lookup is not memoised). */
const memo = new WeakMap<RequestEvent, string>();

/** The setting for writes made now: the JSON of the running request's actor, `""` outside any. */
export function currentActor(): string {
  const event = requestInScope();
  if (!event) return "";
  const known = memo.get(event);
  if (known !== undefined) return known;
  const state = event.sessionState;
  const settled = state !== undefined && !(state instanceof Promise);
  // Without a credential the caller is anonymous for good; with one, a lookup not yet finished is not.
  const resolved: SessionState | undefined = settled ? state : carriesCredential(event.headers) ? undefined : { user: null, session: null };
  const value = JSON.stringify(actorOf(event, resolved));
  if (resolved) memo.set(event, value);
  return value;
}

function actorOf(event: RequestEvent, state: SessionState | undefined): AuditActor {
  const base = { requestId: event.requestId, impersonatorId: null, job: null, organizationId: null };
  // Built by the jobs plugin, never served: a request that names this host is a caller's like any other.
  if (!event.served && event.request.url.startsWith(JOB_PREFIX)) {
    const address = new URL(event.request.url);
    // A job sent during a request in an organization runs for its sender, in that organization.
    return {
      ...base,
      kind: "job",
      userId: address.searchParams.get("for"),
      organizationId: address.searchParams.get("organization"),
      source: "job",
      job: decodeURIComponent(address.pathname.slice("/jobs/".length)),
    };
  }
  const user = state?.user ?? null;
  const session = (state?.session ?? null) as Record<string, unknown> | null;
  const headers = event.headers;
  const kind = !user ? "anonymous" : headers.has("x-api-key") && !headers.has("cookie") ? "apiKey" : "user";
  return {
    ...base,
    kind,
    userId: user?.id ?? null,
    impersonatorId: typeof session?.impersonatedBy === "string" ? session.impersonatedBy : null,
    organizationId: typeof session?.activeOrganizationId === "string" ? session.activeOrganizationId : null,
    source: sourceOf(event),
  };
}

function sourceOf(event: RequestEvent): string {
  // Built in process: an `app.client()` call.
  if (!event.served) return "client";
  const path = event.path;
  if (path.startsWith("/rpc/_admin/")) return "admin";
  if (path.startsWith("/rpc/")) return "rpc";
  if (path.startsWith("/rest/")) return "rest";
  if (path.startsWith("/api/auth/")) return "auth";
  // The MCP surface calls procedures through the gate, which names them on the event.
  if (event.procedure !== undefined) return "mcp";
  return "route";
}

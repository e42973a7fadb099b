/** The signed-in user, as the auth library returns it. */
export interface SessionUser {
  id: string;
  email: string;
  name: string;
  role?: string | null;
  banned?: boolean | null;
  [key: string]: unknown;
}

export interface UserSession {
  id: string;
  userId: string;
  expiresAt: Date;
  token?: string;
  [key: string]: unknown;
}

export interface SessionState {
  user: SessionUser | null;
  session: UserSession | null;
}

/** What a lookup reads and memoises on (the request event), named here so this file needs no import of it. */
export interface SessionCarrier {
  readonly headers: Headers;
  sessionState: SessionState | Promise<SessionState> | undefined;
}

export type SessionResolver<E extends SessionCarrier = SessionCarrier> = (event: E) => Promise<SessionState | null | undefined>;

const ANONYMOUS: SessionState = Object.freeze({ user: null, session: null }) as SessionState;

/** Only these headers can carry a credential; without one, no lookup is made. */
export function carriesCredential(headers: Headers): boolean {
  return headers.has("cookie") || headers.has("authorization") || headers.has("x-api-key");
}

/**
 * Resolves the session at most once per request (memoised on the event), so the rate limiter,
 * routes, RPC, REST and MCP share one lookup. A failing lookup rejects (a 500), never silently
 * downgrades the caller to anonymous.
 */
export function resolveSession<E extends SessionCarrier>(event: E, resolver: SessionResolver<E> | undefined): SessionState | Promise<SessionState> {
  if (event.sessionState) return event.sessionState;
  // Anonymous requests stay synchronous: no promise, no microtask on the hot path.
  if (!resolver || !carriesCredential(event.headers)) return (event.sessionState = ANONYMOUS);
  // Once resolved, the memo holds the state itself, so later readers (and the request log) need no await.
  return (event.sessionState = resolver(event).then((state) => (event.sessionState = state ?? ANONYMOUS)));
}

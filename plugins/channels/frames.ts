/**
 * The wire protocol, one JSON object per WebSocket message or SSE event. A client sends `join`,
 * `leave`, `send`, `track`, `untrack` and `pong` (each may carry a `ref` its answer repeats); the
 * server sends `ready` first (with the connection's key, which its presence and its messages'
 * `from` carry), then `joined`, `ok`, `error`, `message`, `presence`, `left` and `ping`.
 */
export type ClientFrame =
  | { type: "join"; channel: string; ref?: string | number }
  | { type: "leave"; channel: string; ref?: string | number }
  | { type: "send"; channel: string; event: string; payload?: unknown; ref?: string | number }
  | { type: "track"; channel: string; state: unknown; ref?: string | number }
  | { type: "untrack"; channel: string; ref?: string | number }
  | { type: "pong" }
  | { type: "ping" };

export type PresenceFrame =
  | { type: "presence"; channel: string; event: "sync"; state: Record<string, unknown> }
  | { type: "presence"; channel: string; event: "join"; key: string; state: unknown }
  | { type: "presence"; channel: string; event: "leave"; key: string };

export type ServerFrame =
  | { type: "ready"; id: string; heartbeatMs: number; token?: string }
  | { type: "joined"; channel: string; ref?: string | number }
  | { type: "ok"; channel?: string; ref?: string | number }
  | { type: "error"; channel?: string; ref?: string | number; code: string; status: number; message: string }
  | { type: "message"; channel: string; event: string; payload: unknown; from?: string }
  | PresenceFrame
  | { type: "left"; channel: string; code?: string; status?: number; message?: string }
  | { type: "ping" }
  | { type: "pong" };

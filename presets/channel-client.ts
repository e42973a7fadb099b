import type { z } from "zod";
import type { ChannelChange, ChannelName, ClientFrame, DeclaredChannels, ServerFrame } from "../plugins/channels/index.js";
import { RpcError } from "./rpc-error.js";

type EventsOf<D, C extends string> = {
  [P in keyof D & string]: C extends ChannelName<P> ? (D[P] extends { events: infer E } ? E & (D[P] extends { changes: object } ? { change: z.ZodType<ChannelChange> } : {}) : never) : never;
}[keyof D & string];

type Payload<S> = S extends z.ZodType ? z.output<S> : unknown;
type Input<S> = S extends z.ZodType ? z.input<S> : unknown;

/** One channel as the client holds it; joined when first created, left by `leave()`. */
export interface ChannelHandle<Events = Record<string, z.ZodType>> {
  /** Resolves once joined; rejects with the refusal (`RpcError`: 401, 403, 404, 429). */
  readonly joined: Promise<void>;
  /**
   * Calls `fn` with each `event` payload from other members and the server, and who sent it
   * (`from`: the sender's connection key, as in `presence()`; absent from the server). Returns an unsubscribe.
   */
  on<E extends keyof Events & string>(event: E, fn: (payload: Payload<Events[E]>, meta: { from?: string }) => void): () => void;
  /** Sends an event to the other members; rejects with the refusal (400 invalid, 403, 413, 429). */
  send<E extends keyof Events & string>(event: E, payload: Input<Events[E]>): Promise<void>;
  /** Tracks this connection's presence state (kept across reconnects); updates are coalesced by the server. */
  track(state: unknown): Promise<void>;
  untrack(): Promise<void>;
  /** The presence state now: one entry per tracked connection, by key. */
  presence(): Record<string, unknown>;
  /** This connection's key (its presence key and its messages' `from`), once the socket is open. */
  key(): string | undefined;
  /** Calls `fn` after each presence change (`sync`, `join`, `leave`) with the whole state and the change. */
  onPresence(fn: (state: Record<string, unknown>, change: { event: "sync" | "join" | "leave"; key?: string; state?: unknown }) => void): () => void;
  /** Calls `fn` when the server ends this membership (a revoked session, a lost role, a rejoin refused after a reconnect). */
  onLeft(fn: (error: RpcError<string, unknown>) => void): () => void;
  leave(): void;
}

export interface ChannelClientOptions {
  url: string;
  /** Headers for the socket's handshake (a server-side client's cookie); browsers send their cookies themselves. */
  headers?: HeadersInit | (() => HeadersInit | Promise<HeadersInit>);
  /**
   * The WebSocket class: the browser's (the default), or on Node 20 `undici`'s (`import { WebSocket } from "undici"`).
   * @default globalThis.WebSocket
   */
  WebSocket?: unknown;
  /** @default "/channels" */
  path?: string;
}

interface Pending {
  resolve(): void;
  reject(error: RpcError<string, unknown>): void;
}

interface State {
  name: string;
  listeners: Map<string, Set<(payload: unknown, meta: { from?: string }) => void>>;
  presence: Record<string, unknown>;
  presenceListeners: Set<(state: Record<string, unknown>, change: { event: "sync" | "join" | "leave"; key?: string; state?: unknown }) => void>;
  leftListeners: Set<(error: RpcError<string, unknown>) => void>;
  tracked: { state: unknown } | undefined;
  joined: Promise<void>;
  settleJoin?: Pending;
  /** Joined once: a later refusal (a rejoin after a reconnect) ends the membership instead. */
  wasJoined?: boolean;
  handle?: ChannelHandle<any>;
}

const toError = (frame: { code?: string; status?: number; message?: string }) =>
  new RpcError((frame.code ?? "INTERNAL_SERVER_ERROR") as never, { status: frame.status, message: frame.message });

/**
 * The channels side of the typed client: one socket for every channel, opened at the first
 * `channel()`, answering the server's pings, reconnecting with backoff (channels rejoined, tracked
 * state tracked again).
 */
export function channelClient(options: ChannelClientOptions) {
  const channels = new Map<string, State>();
  const pending = new Map<number, Pending>();
  let ref = 0;
  let socket: { send(text: string): void; close(): void; readyState: number } | undefined;
  let opening: Promise<void> | undefined;
  let delay = 250;
  let stopped = false;
  let connectionKey: string | undefined;

  const url = () => {
    const base = new URL(options.path ?? "/channels", options.url.replace(/\/$/, "") + "/");
    base.protocol = base.protocol === "https:" ? "wss:" : "ws:";
    return base.toString();
  };

  const onFrame = (frame: ServerFrame) => {
    if (frame.type === "ping") return raw({ type: "pong" });
    if (frame.type === "ready") connectionKey = frame.id;
    const state = "channel" in frame && frame.channel ? channels.get(frame.channel) : undefined;
    const answer = "ref" in frame && typeof frame.ref === "number" ? pending.get(frame.ref) : undefined;
    switch (frame.type) {
      case "joined":
        if (state) state.wasJoined = true;
        state?.settleJoin?.resolve();
        if (state?.tracked) void call({ type: "track", channel: state.name, state: state.tracked.state }).catch(() => {});
        break;
      case "ok":
        answer?.resolve();
        pending.delete(frame.ref as number);
        break;
      case "error":
        if (answer) {
          answer.reject(toError(frame));
          pending.delete(frame.ref as number);
        }
        else if (state && frame.ref === undefined && !state.wasJoined) state.settleJoin?.reject(toError(frame));
        else if (state && frame.ref === undefined) {
          channels.delete(state.name);
          for (const fn of state.leftListeners) fn(toError(frame));
        }
        break;
      case "message":
        for (const fn of state?.listeners.get(frame.event) ?? []) fn(frame.payload, frame.from === undefined ? {} : { from: frame.from });
        break;
      case "presence": {
        if (!state) break;
        if (frame.event === "sync") state.presence = { ...frame.state };
        else if (frame.event === "join") state.presence[frame.key] = frame.state;
        else delete state.presence[frame.key];
        const change = frame.event === "sync" ? { event: frame.event } : { event: frame.event, key: frame.key, ...(frame.event === "join" ? { state: frame.state } : {}) };
        for (const fn of state.presenceListeners) fn(state.presence, change);
        break;
      }
      case "left":
        if (state && frame.code) {
          channels.delete(state.name);
          for (const fn of state.leftListeners) fn(toError(frame));
        }
        break;
    }
  };

  const open = (): Promise<void> =>
    (opening ??= (async () => {
      const Impl = (options.WebSocket ?? (globalThis as { WebSocket?: unknown }).WebSocket) as (new (url: string, init?: unknown) => any) | undefined;
      if (!Impl) throw new Error("No WebSocket implementation: pass createClient({ WebSocket }) (on Node 20: import { WebSocket } from \"undici\")");
      const headers = typeof options.headers === "function" ? await options.headers() : options.headers;
      const ws = headers && options.WebSocket ? new Impl(url(), { headers: Object.fromEntries(new Headers(headers)) }) : new Impl(url());
      await new Promise<void>((resolve, reject) => {
        ws.onopen = () => resolve();
        ws.onerror = () => reject(new RpcError("INTERNAL_SERVER_ERROR", { message: "The channel socket could not be opened" }));
      });
      socket = ws;
      delay = 250;
      ws.onmessage = (event: { data: unknown }) => {
        try {
          onFrame(JSON.parse(String(event.data)));
        } catch {
          // A frame that is not JSON is not ours.
        }
      };
      ws.onclose = () => {
        socket = undefined;
        opening = undefined;
        for (const answer of pending.values()) answer.reject(new RpcError("INTERNAL_SERVER_ERROR", { message: "The channel socket closed" }));
        pending.clear();
        // Who is here is unknown until the rejoin's `sync`: nobody, rather than a stale list.
        for (const state of channels.values()) {
          if (Object.keys(state.presence).length === 0) continue;
          state.presence = {};
          for (const fn of state.presenceListeners) fn(state.presence, { event: "sync" });
        }
        if (stopped || channels.size === 0) return;
        setTimeout(() => void reconnect(), delay);
        delay = Math.min(delay * 2, 10_000);
      };
      for (const state of channels.values()) raw({ type: "join", channel: state.name });
    })().catch((error) => {
      opening = undefined;
      throw error;
    }));

  const reconnect = async () => {
    if (stopped) return;
    try {
      await open();
    } catch {
      setTimeout(() => void reconnect(), delay);
      delay = Math.min(delay * 2, 10_000);
    }
  };

  const raw = (frame: ClientFrame) => socket?.send(JSON.stringify(frame));

  const call = async (frame: ClientFrame & { ref?: number }): Promise<void> => {
    await open();
    const id = ++ref;
    return new Promise<void>((resolve, reject) => {
      pending.set(id, { resolve, reject });
      raw({ ...frame, ref: id } as ClientFrame);
    });
  };

  const channel = (name: string): ChannelHandle<any> => {
    const existing = channels.get(name);
    if (existing?.handle) return existing.handle;
    const state: State = { name, listeners: new Map(), presence: {}, presenceListeners: new Set(), leftListeners: new Set(), tracked: undefined, joined: undefined as never };
    state.joined = new Promise<void>((resolve, reject) => (state.settleJoin = { resolve, reject }));
    state.joined.catch(() => channels.delete(name));
    channels.set(name, state);
    open().then(
      () => raw({ type: "join", channel: name }),
      (error) => state.settleJoin?.reject(error),
    );
    const add = <T>(set: Set<T>, fn: T) => {
      set.add(fn);
      return () => void set.delete(fn);
    };
    state.handle = {
      joined: state.joined,
      on(event, fn) {
        let set = state.listeners.get(event);
        if (!set) state.listeners.set(event, (set = new Set()));
        return add(set, fn as (payload: unknown, meta: { from?: string }) => void);
      },
      async send(event, payload) {
        await state.joined;
        await call({ type: "send", channel: name, event, payload });
      },
      async track(value) {
        state.tracked = { state: value };
        await state.joined;
        await call({ type: "track", channel: name, state: value });
      },
      async untrack() {
        state.tracked = undefined;
        await state.joined;
        await call({ type: "untrack", channel: name });
      },
      presence: () => ({ ...state.presence }),
      key: () => connectionKey,
      onPresence: (fn) => add(state.presenceListeners, fn),
      onLeft: (fn) => add(state.leftListeners, fn),
      leave() {
        channels.delete(name);
        raw({ type: "leave", channel: name });
      },
    };
    return state.handle;
  };

  return {
    channel,
    /** Closes the socket and forgets every channel. */
    close() {
      stopped = true;
      channels.clear();
      socket?.close();
    },
  };
}

/** The client's `channel()` for a router with `.channels()`. */
export type ChannelsClient<Router> = Router extends { "~channels": infer D extends DeclaredChannels }
  ? {
      channel<C extends ChannelName<keyof D & string>>(name: C): ChannelHandle<EventsOf<D, C>>;
      /** Closes the channel socket. */
      closeChannels(): void;
    }
  : {};

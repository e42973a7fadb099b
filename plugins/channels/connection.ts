import { randomBytes } from "node:crypto";
import { RpcError, type AppRpcContext } from "../../kernel/index.js";
import type { ClientFrame, ServerFrame } from "./frames.js";
import type { Hub, Member } from "./hub.js";
import type { ChannelSettings } from "./options.js";
import type { Outgoing } from "./outgoing.js";
import { matchChannel, type ChannelPattern, type MatchedChannel } from "./patterns.js";
import { assertChannelRule, joinRule, sendRule } from "./rules.js";

/** How a transport hands a connection its bytes: a WebSocket peer, or an SSE stream. */
export interface Transport {
  /** A frame for this connection alone (a string), or one shared by many, encoded once for all of them. */
  send(message: string | Outgoing): void;
  /** Bytes queued and not yet written. */
  buffered(): number;
  close(code: number, reason: string): void;
}

export interface ConnectionDeps {
  hub: Hub;
  patterns: readonly ChannelPattern[];
  settings: ChannelSettings;
  /** A fresh context from the connection's own credentials (a revocation or ban shows here). */
  refresh(headers: Headers): Promise<AppRpcContext>;
  onClose(connection: Connection): void;
}

/** Close codes: 1008 policy (rules), 1009 too big, 1011 unexpected, 1013 slow consumer. */
export const CLOSE = { normal: 1000, gone: 1001, policy: 1008, tooBig: 1009, unexpected: 1011, slow: 1013 } as const;

const errorFrame = (error: unknown, frame?: { channel?: unknown; ref?: unknown }): ServerFrame => {
  const known = error instanceof RpcError ? error : new RpcError("INTERNAL_SERVER_ERROR", { message: "Internal server error" });
  const out: ServerFrame = { type: "error", code: known.code, status: known.status, message: known.message };
  if (typeof frame?.channel === "string") out.channel = frame.channel;
  if (typeof frame?.ref === "string" || typeof frame?.ref === "number") out.ref = frame.ref;
  return out;
};

const refOf = (frame: { ref?: unknown }) => (typeof frame.ref === "string" || typeof frame.ref === "number" ? { ref: frame.ref } : {});

/**
 * One client connection, whatever carries it: the channels it is in (each joined after its rule
 * passed), its frame rate, and its last sign of life. Frames are handled one at a time, in order.
 */
export class Connection implements Member {
  readonly id = randomBytes(12).toString("base64url");
  readonly channels = new Map<string, MatchedChannel>();
  context: AppRpcContext;
  lastSeen = Date.now();
  /** When its rules were last checked (at join, then by the revalidation sweep). */
  checkedAt = Date.now();
  closed = false;
  #windowStart = 0;
  #windowCount = 0;
  #queue: Promise<void> = Promise.resolve();
  readonly #transport: Transport;
  readonly #deps: ConnectionDeps;
  readonly caller: string;

  constructor(transport: Transport, context: AppRpcContext, caller: string, deps: ConnectionDeps) {
    this.#transport = transport;
    this.context = context;
    this.caller = caller;
    this.#deps = deps;
  }

  /** The first frame; `token` is an SSE stream's secret for its POSTs (the `id` is public: it keys presence). */
  start(token?: string): void {
    this.frame({ type: "ready", id: this.id, heartbeatMs: this.#deps.settings.heartbeatMs, ...(token ? { token } : {}) });
  }

  /** Hands the client a frame; a client that does not read is disconnected, never buffered without bound. */
  write(message: string | Outgoing): void {
    if (this.closed) return;
    if (this.#transport.buffered() > this.#deps.settings.limits.sendBufferBytes) {
      this.close(CLOSE.slow, "Slow consumer: too many messages waiting to be sent");
      return;
    }
    this.#transport.send(message);
  }

  frame(frame: ServerFrame): void {
    this.write(JSON.stringify(frame));
  }

  /** One text frame from the client, handled after the ones before it. */
  receive(text: string): void {
    this.lastSeen = Date.now();
    this.#queue = this.#queue.then(() => this.#handle(text)).catch(() => {});
  }

  /** Ends the connection: it leaves every channel (presence included) and the transport closes. */
  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    for (const channel of this.channels.keys()) this.#deps.hub.leave(channel, this);
    this.channels.clear();
    this.#deps.onClose(this);
    try {
      this.#transport.close(code, reason);
    } catch {
      // Already gone.
    }
  }

  /** Re-checks the join rule of every channel with a fresh session; a refused channel is left with a `left` frame. */
  async revalidate(): Promise<void> {
    this.checkedAt = Date.now();
    if (this.closed || this.channels.size === 0 || this.#onlyPublic()) return;
    let fresh: AppRpcContext;
    try {
      fresh = await this.#deps.refresh(this.context.headers);
    } catch {
      return;
    }
    this.context = fresh;
    for (const [channel, matched] of [...this.channels]) {
      try {
        await assertChannelRule(joinRule(matched), matched, channel, fresh);
      } catch (error) {
        if (!this.channels.has(channel)) continue;
        this.channels.delete(channel);
        this.#deps.hub.leave(channel, this);
        const { code, status, message } = errorFrame(error) as { code: string; status: number; message: string };
        this.frame({ type: "left", channel, code, status, message });
      }
    }
  }

  /** Whether no channel it is in has a join or send rule a new session could change: then a check has nothing to look up. */
  #onlyPublic(): boolean {
    for (const matched of this.channels.values()) {
      const send = sendRule(matched);
      if (joinRule(matched) !== "public" || (send !== "public" && send !== false)) return false;
    }
    return true;
  }

  /** A frame POSTed beside an SSE stream: handled in order with the others; a refusal rejects (an HTTP status). */
  post(frame: unknown): Promise<void> {
    this.lastSeen = Date.now();
    const run = this.#queue.then(() => this.apply(frame));
    this.#queue = run.catch(() => {});
    return run;
  }

  async #handle(text: string): Promise<void> {
    if (this.closed) return;
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      this.frame(errorFrame(new RpcError("BAD_REQUEST", { message: "A frame must be a JSON object" })));
      return;
    }
    try {
      await this.apply(frame);
    } catch (error) {
      this.frame(errorFrame(error, frame as { channel?: unknown; ref?: unknown }));
    }
  }

  /** Applies one frame; a refusal throws the `RpcError` the client gets (an `error` frame or an HTTP status). */
  async apply(input: unknown): Promise<void> {
    if (this.closed) throw new RpcError("NOT_FOUND", { message: "This connection is closed" });
    const frame = input as ClientFrame;
    if (!frame || typeof frame !== "object" || Array.isArray(frame) || typeof frame.type !== "string") {
      throw new RpcError("BAD_REQUEST", { message: 'A frame must be a JSON object with a "type"' });
    }
    if (frame.type === "pong") return;
    if (frame.type === "ping") return this.frame({ type: "pong" });
    // Presence updates are coalesced, never counted against the rate.
    if (frame.type !== "track" && !this.#withinRate()) {
      throw new RpcError("TOO_MANY_REQUESTS", { message: `At most ${this.#deps.settings.limits.messagesPerSecond} frames per second per connection; this one was dropped` });
    }
    await this.#dispatch(frame);
  }

  #withinRate(): boolean {
    const now = Date.now();
    if (now - this.#windowStart >= 1_000) {
      this.#windowStart = now;
      this.#windowCount = 0;
    }
    return ++this.#windowCount <= this.#deps.settings.limits.messagesPerSecond;
  }

  async #dispatch(frame: ClientFrame): Promise<void> {
    const { hub, patterns, settings } = this.#deps;
    const channel = (frame as { channel?: unknown }).channel;
    switch (frame.type) {
      case "join": {
        const matched = matchChannel(patterns, channel);
        if (!matched) throw new RpcError("NOT_FOUND", { message: `No channel matches "${String(channel)}"` });
        const name = channel as string;
        if (this.channels.has(name)) return this.frame({ type: "joined", channel: name, ...refOf(frame) });
        if (this.channels.size >= settings.limits.channelsPerConnection) {
          throw new RpcError("TOO_MANY_REQUESTS", { message: `A connection may be in at most ${settings.limits.channelsPerConnection} channels` });
        }
        await assertChannelRule(joinRule(matched), matched, name, this.context);
        if (this.closed || this.channels.has(name)) return;
        this.channels.set(name, matched);
        this.frame({ type: "joined", channel: name, ...refOf(frame) });
        hub.join(name, this, Boolean(matched.pattern.definition.presence));
        return;
      }
      case "leave": {
        const name = this.#member(channel);
        this.channels.delete(name);
        hub.leave(name, this);
        return this.frame({ type: "left", channel: name });
      }
      case "send": {
        const name = this.#member(channel);
        const matched = this.channels.get(name)!;
        await assertChannelRule(sendRule(matched), matched, name, this.context, "send on");
        const payload = parseEvent(matched, frame.event, frame.payload, settings.limits.maxPayloadBytes);
        hub.publish(name, frame.event, payload, this);
        if (frame.ref !== undefined) this.frame({ type: "ok", channel: name, ...refOf(frame) });
        return;
      }
      case "track": {
        const name = this.#member(channel);
        const matched = this.channels.get(name)!;
        const presence = matched.pattern.definition.presence;
        if (!presence) throw new RpcError("BAD_REQUEST", { message: `"${name}" has no presence` });
        const bytes = Buffer.byteLength(JSON.stringify(frame.state ?? null));
        if (bytes > settings.limits.presenceStateBytes) {
          throw new RpcError("PAYLOAD_TOO_LARGE", { message: `A presence state may be at most ${settings.limits.presenceStateBytes} bytes, got ${bytes}` });
        }
        const maxKeys = (typeof presence === "object" && presence.maxKeys) || settings.limits.presenceKeys;
        if (!hub.hasPresence(name, this.id) && hub.presenceCount(name) >= maxKeys) {
          throw new RpcError("TOO_MANY_REQUESTS", { message: `"${name}" already tracks ${maxKeys} presence keys` });
        }
        hub.track(name, this, frame.state ?? null);
        if (frame.ref !== undefined) this.frame({ type: "ok", channel: name, ...refOf(frame) });
        return;
      }
      case "untrack": {
        const name = this.#member(channel);
        hub.untrack(name, this);
        if (frame.ref !== undefined) this.frame({ type: "ok", channel: name, ...refOf(frame) });
        return;
      }
      default:
        throw new RpcError("BAD_REQUEST", { message: `Unknown frame type "${String((frame as { type: unknown }).type)}"` });
    }
  }

  #member(channel: unknown): string {
    if (typeof channel !== "string" || !this.channels.has(channel)) throw new RpcError("BAD_REQUEST", { message: `Join "${String(channel)}" first` });
    return channel;
  }
}

/** An event's payload, validated by its schema (400 naming the field) and bounded in size (413). */
export function parseEvent(matched: MatchedChannel, event: unknown, payload: unknown, maxBytes: number): unknown {
  const { events } = matched.pattern.definition;
  const schema = typeof event === "string" && Object.hasOwn(events, event) ? events[event] : undefined;
  if (!schema) throw new RpcError("BAD_REQUEST", { message: `Unknown event "${String(event)}"; known: ${Object.keys(events).join(", ")}` });
  const bytes = Buffer.byteLength(JSON.stringify(payload ?? null));
  if (bytes > maxBytes) throw new RpcError("PAYLOAD_TOO_LARGE", { message: `A payload may be at most ${maxBytes} bytes, got ${bytes}` });
  const result = schema.safeParse(payload);
  if (!result.success) {
    const issue = result.error.issues[0];
    const path = issue?.path.length ? `${issue.path.join(".")}: ` : "";
    throw new RpcError("BAD_REQUEST", { message: `Invalid payload for "${event}": ${path}${issue?.message ?? "invalid"}`, data: { issues: result.error.issues } });
  }
  return result.data;
}

import { randomUUID } from "node:crypto";
import type { Bus, BusMessage } from "./bus.js";
import type { PresenceFrame } from "./frames.js";
import { Outgoing } from "./outgoing.js";
import type { MessageSpan } from "./tracing.js";

/** A member as the hub sees it: an id unique across replicas and a way to hand it a frame. */
export interface Member {
  readonly id: string;
  write(message: string | Outgoing): void;
}

interface PresenceEntry {
  state: unknown;
  /** The replica holding the connection. */
  replica: string;
}

interface Room {
  members: Set<Member>;
  presence: Map<string, PresenceEntry> | undefined;
  /** Presence changes not yet sent: the latest state per key, or null for a leave. */
  pending: Map<string, unknown | null> | undefined;
  /** Of those, the ones made here, which the other replicas must hear. */
  pendingLocal: Set<string> | undefined;
  timer: ReturnType<typeof setTimeout> | undefined;
}

export interface HubCounters {
  published: number;
  delivered: number;
  received: number;
}

/**
 * The members of each channel in this process, the fan-out of its messages, and its presence:
 * entries keyed per connection, made here or heard from other replicas, changes coalesced per
 * channel and sent at most every `flushMs`. A replica heartbeats every `heartbeatMs`; the entries
 * of a replica not heard for three intervals are dropped (they leave), as when it says it exits.
 */
export class Hub {
  readonly replica = randomUUID();
  readonly counters: HubCounters = { published: 0, delivered: 0, received: 0 };
  readonly #rooms = new Map<string, Room>();
  readonly #heard = new Map<string, number>();
  readonly #bus: Bus;
  readonly #flushMs: number;
  readonly #heartbeatMs: number;
  #beat: ReturnType<typeof setInterval> | undefined;
  readonly #onError: (error: unknown) => void;
  readonly #span: MessageSpan | undefined;

  constructor(options: { bus: Bus; flushMs: number; heartbeatMs: number; onError: (error: unknown) => void; span?: MessageSpan }) {
    this.#span = options.span;
    this.#bus = options.bus;
    this.#flushMs = options.flushMs;
    this.#heartbeatMs = options.heartbeatMs;
    this.#onError = options.onError;
  }

  get busKind(): Bus["kind"] {
    return this.#bus.kind;
  }

  async start(): Promise<void> {
    await this.#bus.start((message) => this.#receive(message));
    if (this.#bus.kind === "local") return;
    this.#beat = setInterval(() => {
      this.#send({ r: this.replica, k: "h" });
      this.#expireReplicas();
    }, this.#heartbeatMs);
    this.#beat.unref?.();
  }

  async close(): Promise<void> {
    if (this.#beat) clearInterval(this.#beat);
    for (const room of this.#rooms.values()) if (room.timer) clearTimeout(room.timer);
    if (this.#bus.kind !== "local") await this.#bus.publish({ r: this.replica, k: "x" }).catch(() => {});
    await this.#bus.close();
  }

  /** Channels with members here: name, members, presence keys (every replica's). */
  rooms(): Array<{ channel: string; members: number; presence: number }> {
    return [...this.#rooms].map(([channel, room]) => ({ channel, members: room.members.size, presence: room.presence?.size ?? 0 }));
  }

  /** Adds a member; on a presence channel it gets the current state (`sync`) at once. */
  join(channel: string, member: Member, presence: boolean): void {
    let room = this.#rooms.get(channel);
    if (!room) {
      room = { members: new Set(), presence: presence ? new Map() : undefined, pending: undefined, pendingLocal: undefined, timer: undefined };
      this.#rooms.set(channel, room);
      // The other replicas' entries for a channel this one had no member of.
      if (presence) this.#send({ r: this.replica, k: "w", c: channel });
    }
    room.members.add(member);
    if (room.presence) member.write(JSON.stringify({ type: "presence", channel, event: "sync", state: this.#state(room) } satisfies PresenceFrame));
  }

  /** Removes a member and its presence entry. */
  leave(channel: string, member: Member): void {
    const room = this.#rooms.get(channel);
    if (!room) return;
    room.members.delete(member);
    if (room.presence?.has(member.id)) this.#change(channel, room, member.id, null, true);
    this.#dropIfEmpty(channel, room);
  }

  presenceCount(channel: string): number {
    return this.#rooms.get(channel)?.presence?.size ?? 0;
  }

  hasPresence(channel: string, key: string): boolean {
    return this.#rooms.get(channel)?.presence?.has(key) ?? false;
  }

  track(channel: string, member: Member, state: unknown): void {
    const room = this.#rooms.get(channel);
    if (room?.presence && room.members.has(member)) this.#change(channel, room, member.id, state, true);
  }

  untrack(channel: string, member: Member): void {
    const room = this.#rooms.get(channel);
    if (room?.presence?.has(member.id)) this.#change(channel, room, member.id, null, true);
  }

  /**
   * A message to every member of `channel` on every replica but `sender`, whose connection key
   * (its presence key) the message names as `from`; none from the server.
   */
  publish(channel: string, event: string, payload: unknown, sender?: Member): void {
    this.counters.published++;
    const end = this.#span?.("channels.publish", channel, event);
    const members = this.#deliver(channel, event, payload, sender?.id, sender);
    end?.(members);
    this.#send({ r: this.replica, k: "m", c: channel, e: event, p: payload, ...(sender ? { f: sender.id } : {}) });
  }

  /** Hands a message to this process's members of `channel`; returns how many. */
  #deliver(channel: string, event: string, payload: unknown, from: string | undefined, except?: Member): number {
    const room = this.#rooms.get(channel);
    if (!room) return 0;
    // Serialised and framed once per message, whatever the number of members.
    const message = new Outgoing(JSON.stringify(from ? { type: "message", channel, event, payload, from } : { type: "message", channel, event, payload }));
    let members = 0;
    for (const member of room.members) {
      if (member === except) continue;
      members++;
      member.write(message);
    }
    this.counters.delivered += members;
    return members;
  }

  /** Whether the last publish to the other replicas failed: an outage is reported once, at its first failure. */
  #failing = false;

  #send(message: BusMessage): void {
    if (this.#bus.kind === "local") return;
    this.#bus.publish(message).then(
      () => (this.#failing = false),
      (error) => {
        if (!this.#failing) this.#onError(error);
        this.#failing = true;
      },
    );
  }

  #receive(message: BusMessage): void {
    if (message.r === this.replica) return;
    this.counters.received++;
    this.#heard.set(message.r, Date.now());
    if (message.k === "m" && message.c && message.e) {
      if (!this.#rooms.has(message.c)) return;
      const end = this.#span?.("channels.deliver", message.c, message.e);
      end?.(this.#deliver(message.c, message.e, message.p, message.f));
      return;
    }
    if (message.k === "x") return this.#forgetReplica(message.r);
    const room = message.c ? this.#rooms.get(message.c) : undefined;
    if (!room?.presence) return;
    if (message.k === "w") {
      const mine = [...room.presence].filter(([, entry]) => entry.replica === this.replica);
      if (mine.length) this.#send({ r: this.replica, k: "p", c: message.c, j: Object.fromEntries(mine.map(([key, entry]) => [key, entry.state])) });
      return;
    }
    if (message.k !== "p") return;
    for (const [key, state] of Object.entries(message.j ?? {})) {
      room.presence.set(key, { state, replica: message.r });
      this.#queue(message.c!, room, key, state, false);
    }
    for (const key of message.l ?? []) {
      if (room.presence.delete(key)) this.#queue(message.c!, room, key, null, false);
    }
  }

  #change(channel: string, room: Room, key: string, state: unknown | null, local: boolean): void {
    if (state === null) room.presence!.delete(key);
    else room.presence!.set(key, { state, replica: this.replica });
    this.#queue(channel, room, key, state, local);
  }

  #queue(channel: string, room: Room, key: string, state: unknown | null, local: boolean): void {
    (room.pending ??= new Map()).set(key, state);
    if (local) (room.pendingLocal ??= new Set()).add(key);
    room.timer ??= setTimeout(() => this.#flush(channel, room), this.#flushMs);
  }

  #flush(channel: string, room: Room): void {
    room.timer = undefined;
    const pending = room.pending;
    const local = room.pendingLocal;
    room.pending = undefined;
    room.pendingLocal = undefined;
    if (!pending) return;
    const joins: Record<string, unknown> = {};
    const leaves: string[] = [];
    for (const [key, state] of pending) {
      const frame: PresenceFrame = state === null ? { type: "presence", channel, event: "leave", key } : { type: "presence", channel, event: "join", key, state };
      const message = new Outgoing(JSON.stringify(frame));
      for (const member of room.members) member.write(message);
      if (!local?.has(key)) continue;
      if (state === null) leaves.push(key);
      else joins[key] = state;
    }
    if (leaves.length || Object.keys(joins).length) this.#send({ r: this.replica, k: "p", c: channel, j: joins, l: leaves });
    this.#dropIfEmpty(channel, room);
  }

  #dropIfEmpty(channel: string, room: Room): void {
    if (room.members.size === 0 && !room.timer) this.#rooms.delete(channel);
  }

  #state(room: Room): Record<string, unknown> {
    const state: Record<string, unknown> = {};
    for (const [key, entry] of room.presence!) state[key] = entry.state;
    return state;
  }

  #expireReplicas(): void {
    const deadline = Date.now() - 3 * this.#heartbeatMs;
    for (const [replica, at] of this.#heard) if (at < deadline) this.#forgetReplica(replica);
  }

  #forgetReplica(replica: string): void {
    this.#heard.delete(replica);
    for (const [channel, room] of this.#rooms) {
      for (const [key, entry] of room.presence ?? []) {
        if (entry.replica !== replica) continue;
        room.presence!.delete(key);
        this.#queue(channel, room, key, null, false);
      }
    }
  }
}

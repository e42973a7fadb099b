import { TrellisError, type AppDatabase, type AppRpcContext, type SessionUser } from "../../kernel/index.js";
import type { z } from "zod";

/** The parameters of a channel pattern: `"room:{roomId}"` gives `{ roomId: string }`. */
export type ChannelParams<Pattern extends string> = Pattern extends `${string}{${infer Name}}${infer Rest}`
  ? { [K in Name]: string } & ChannelParams<Rest>
  : {};

/** The channel names a pattern matches: `"room:{roomId}"` gives `` `room:${string}` ``. */
export type ChannelName<Pattern extends string> = Pattern extends `${infer Head}{${string}}${infer Rest}` ? `${Head}${string}${ChannelName<Rest>}` : Pattern;

/** What a rule function receives: the caller, the channel's parameters, the database and the whole context. */
export interface ChannelRuleArgs<Params = Record<string, string>> {
  user: SessionUser | null;
  params: Params;
  db: AppDatabase<any>;
  context: AppRpcContext;
  /** The channel's full name (`"room:1"`). */
  channel: string;
}

/**
 * Who may join a channel or send on it, in the vocabulary of procedures: `"public"`, `"authenticated"`
 * (401 signed out), `"admin"` (403 without one of `roles`), or a function of `{ user, params, db }`
 * (403 when it returns false).
 */
export type ChannelRule<Params = Record<string, string>> =
  | "public"
  | "authenticated"
  | "admin"
  | ((args: ChannelRuleArgs<Params>) => boolean | Promise<boolean>);

/**
 * One channel pattern's definition. `Rule` widens `join` and `send` with the rules the app's facade
 * turns into functions before the plugin sees them (organization roles: docs/organizations.md).
 */
export interface ChannelDefinition<Params = Record<string, string>, Events extends Record<string, z.ZodType> = Record<string, z.ZodType>, Rule = never> {
  /**
   * Who may join (receive its messages and presence).
   * @default "authenticated"
   */
  join?: ChannelRule<Params> | Rule;
  /**
   * Who may send client messages on it; only members may send.
   * @default the `join` rule
   */
  send?: ChannelRule<Params> | Rule | false;
  /**
   * Presence on this channel: members may `track` a state, and every member sees `sync`, `join`
   * and `leave`. `maxKeys` bounds the tracked connections across every replica.
   * @default false
   */
  presence?: boolean | { maxKeys?: number };
  /** Roles accepted by `"admin"`. @default ["admin"] */
  roles?: readonly string[];
  /** The events of the channel and their payload schemas (zod). */
  events: Events;
  /**
   * Committed writes to `table` (made through this app: resources, `_admin`, `db` in procedures
   * and jobs) published as the event `change`, `{ op, row }` with only `columns`, on the channel
   * its row names: each parameter of the pattern is the row's column of the same name
   * (`"room:{roomId}"` takes `row.roomId`). The join rule decides who sees them.
   */
  changes?: { table: string; columns: readonly string[] };
}

/** The payload of a `change` event (`changes` on a channel). */
export interface ChannelChange {
  op: "insert" | "update" | "delete";
  row: Record<string, unknown>;
}

/** The map `.channels()` takes: a pattern per key. */
export type ChannelDefinitions = Record<string, ChannelDefinition<any, any>>;

/** The map as an app declares it, before its facade resolves rules the plugin does not know (organization roles). */
export type DeclaredChannels = Record<string, ChannelDefinition<any, any, any>>;

export interface ChannelLimits {
  /** Largest message payload (JSON bytes); larger ones are refused with 413. @default 262144 (256 KB) */
  maxPayloadBytes?: number;
  /** Frames a connection may send per second (join, send, track...); beyond, 429 and the frame is dropped. @default 50 */
  messagesPerSecond?: number;
  /** Channels one connection may be in at once. @default 100 */
  channelsPerConnection?: number;
  /** Tracked presence keys per channel (one per connection), default for channels that set none. @default 1000 */
  presenceKeys?: number;
  /** Largest tracked presence state (JSON bytes). @default 4096 */
  presenceStateBytes?: number;
  /** Open connections (sockets and SSE streams) per caller: the user, else the client address. @default 20 */
  connectionsPerCaller?: number;
  /** Bytes a connection may have queued and unsent; a slower consumer is disconnected (close code 1013). @default 1048576 */
  sendBufferBytes?: number;
}

/** Options of `.channels(definitions, options)`. */
export interface ChannelsConfig {
  /**
   * The path of the socket (upgrade) and the SSE stream (`<path>/sse`, frames POSTed to `<path>/sse/:id`).
   * @default "/channels"
   */
  path?: string;
  /**
   * An ioredis client: messages and presence cross replicas through Redis pub/sub (a duplicate
   * connection subscribes). Without it, through PostgreSQL LISTEN/NOTIFY when the database
   * listens (`postgresLive`); else within this process only.
   */
  redis?: RedisLike;
  /** Every connection's rules are checked again this often; a refused member is removed from the channel. @default 30000 */
  revalidateMs?: number;
  /** The server pings every `heartbeatMs`; a connection silent for two intervals is closed and leaves. @default 15000 */
  heartbeatMs?: number;
  /** Presence changes of a channel are coalesced and sent at most this often. @default 50 */
  presenceFlushMs?: number;
  limits?: ChannelLimits;
}

/** The slice of an ioredis client channels use. */
export interface RedisLike {
  publish(channel: string, message: string): unknown;
  duplicate(): RedisLike;
  subscribe(channel: string): unknown;
  on(event: "message", listener: (channel: string, message: string) => void): unknown;
  quit?(): unknown;
  disconnect?(): unknown;
}

export interface ChannelSettings {
  path: string;
  redis: RedisLike | undefined;
  revalidateMs: number;
  heartbeatMs: number;
  presenceFlushMs: number;
  limits: Required<ChannelLimits>;
}

const positive = (value: unknown) => typeof value === "number" && Number.isInteger(value) && value > 0;

export function channelSettings(config: ChannelsConfig = {}): ChannelSettings {
  const limits: Required<ChannelLimits> = {
    maxPayloadBytes: 262_144,
    messagesPerSecond: 50,
    channelsPerConnection: 100,
    presenceKeys: 1_000,
    presenceStateBytes: 4_096,
    connectionsPerCaller: 20,
    sendBufferBytes: 1_048_576,
    ...config.limits,
  };
  const settings = {
    path: (config.path ?? "/channels").replace(/\/$/, ""),
    redis: config.redis,
    revalidateMs: config.revalidateMs ?? 30_000,
    heartbeatMs: config.heartbeatMs ?? 15_000,
    presenceFlushMs: config.presenceFlushMs ?? 50,
    limits,
  };
  const problems: string[] = [];
  for (const [key, value] of Object.entries({ ...limits, revalidateMs: settings.revalidateMs, heartbeatMs: settings.heartbeatMs, presenceFlushMs: settings.presenceFlushMs })) {
    if (!positive(value)) problems.push(`${key} must be a whole number above 0, got ${String(value)}`);
  }
  if (!settings.path.startsWith("/")) problems.push(`path must start with "/", got "${settings.path}"`);
  if (problems.length) throw new TrellisError("CHANNELS_INVALID", `.channels(): ${problems.join("; ")}`, { plugin: "channels" });
  return settings;
}

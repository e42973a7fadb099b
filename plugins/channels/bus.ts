import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import type { AppDatabase, LiveProvider } from "../../kernel/index.js";
import type { RedisLike } from "./options.js";

/**
 * What crosses replicas: a message (`m`, with its sender's key `f` when a client sent it), a presence diff (`p`: joins and leaves, keyed per
 * connection), a request for presence (`w`, sent by a replica whose first member joined a
 * presence channel), a replica's heartbeat (`h`) and its orderly exit (`x`). `r` is the sender.
 */
export interface BusMessage {
  r: string;
  k: "m" | "p" | "w" | "h" | "x";
  c?: string;
  e?: string;
  p?: unknown;
  /** A message's sender: its connection key. */
  f?: string;
  j?: Record<string, unknown>;
  l?: string[];
}

export interface Bus {
  readonly kind: "local" | "redis" | "postgres";
  start(onMessage: (message: BusMessage) => void): Promise<void>;
  publish(message: BusMessage): Promise<void>;
  close(): Promise<void>;
}

const parse = (text: string): BusMessage | undefined => {
  try {
    const message = JSON.parse(text) as BusMessage;
    return typeof message?.r === "string" && typeof message.k === "string" ? message : undefined;
  } catch {
    return undefined;
  }
};

/** One process: nothing to cross. */
export function localBus(): Bus {
  return { kind: "local", start: async () => {}, publish: async () => {}, close: async () => {} };
}

/** Redis pub/sub: one publish per message on the app's client, a duplicate connection subscribed. */
export function redisBus(client: RedisLike, channel: string): Bus {
  let subscriber: RedisLike | undefined;
  return {
    kind: "redis",
    async start(onMessage) {
      subscriber = client.duplicate();
      subscriber.on("message", (from, text) => {
        if (from !== channel) return;
        const message = parse(text);
        if (message) onMessage(message);
      });
      await subscriber.subscribe(channel);
    },
    async publish(message) {
      await client.publish(channel, JSON.stringify(message));
    },
    async close() {
      const current = subscriber;
      subscriber = undefined;
      if (current) await Promise.resolve(current.quit ? current.quit() : current.disconnect?.()).catch(() => {});
    },
  };
}

/** NOTIFY carries at most 8,000 bytes; a larger message is stored and its row's id sent instead. */
const NOTIFY_BYTES = 7_900;
export const PAYLOAD_TABLE = "trellis_channel_payload";
/** A stored payload is read at once by every listening replica; older ones are deleted at the next large message. */
const KEEP_SECONDS = 60;

/**
 * PostgreSQL LISTEN/NOTIFY through the database's own listening connection (`postgresLive`, the
 * one live queries use). Apps in other schemas of one database share the channel, so each message
 * names its schema.
 */
export function postgresBus(db: AppDatabase<any>, live: LiveProvider, channel: string): Bus {
  let listener: { close(): Promise<void> } | undefined;
  let schema = "";
  return {
    kind: "postgres",
    async start(onMessage) {
      const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
      schema = rows[0]?.schema ?? "";
      listener = await live.listen!(
        channel,
        (text) => {
          const envelope = parse(text) as (BusMessage & { s?: string; ref?: string }) | undefined;
          if (!envelope || envelope.s !== schema) return;
          if (!envelope.ref) return onMessage(envelope);
          void sql<{ body: string }>`select body from ${sql.table(PAYLOAD_TABLE)} where id = ${envelope.ref}`
            .execute(db)
            .then(({ rows }) => {
              const message = rows[0] && parse(rows[0].body);
              if (message) onMessage(message);
            })
            .catch(() => {});
        },
        () => {},
      );
    },
    async publish(message) {
      const text = JSON.stringify({ ...message, s: schema });
      if (Buffer.byteLength(text) <= NOTIFY_BYTES) {
        await sql`select pg_notify(${channel}, ${text})`.execute(db);
        return;
      }
      const id = randomUUID();
      await sql`delete from ${sql.table(PAYLOAD_TABLE)} where created_at < now() - make_interval(secs => ${KEEP_SECONDS})`.execute(db);
      await sql`insert into ${sql.table(PAYLOAD_TABLE)} (id, body) values (${id}, ${text})`.execute(db);
      await sql`select pg_notify(${channel}, ${JSON.stringify({ r: message.r, k: message.k, s: schema, ref: id })})`.execute(db);
    },
    async close() {
      await listener?.close();
      listener = undefined;
    },
  };
}

/** The table of large payloads, created at start; serialised across replicas starting at once. */
export async function createPayloadTable(db: AppDatabase<any>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext('trellis_channels'))`.execute(trx);
    await sql`create table if not exists ${sql.table(PAYLOAD_TABLE)} (id text primary key, body text not null, created_at timestamptz not null default now())`.execute(trx);
  });
}

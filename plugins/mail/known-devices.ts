import { createHmac } from "node:crypto";
import { sql } from "kysely";
import { addressPrefix, type AppDatabase, type DatabaseKind } from "../../kernel/index.js";

export const DEVICE_TABLE = "trellis_mail_device";

/** Devices remembered per user; the least recently seen beyond this are forgotten. */
const KEPT = 20;

/**
 * What "seen before" means for the new-sign-in notice: the user agent with its digits left out (a
 * browser update is the same browser) and the client address's network (IPv4 /16, IPv6 /48: a
 * home or mobile connection moves within it), hashed with the auth secret so the table holds
 * neither.
 */
export function deviceFingerprint(secret: string, userAgent: string | null | undefined, address: string | null | undefined): string {
  const agent = (userAgent ?? "").toLowerCase().replace(/\d+/g, "").slice(0, 512);
  const network = addressPrefix(address ?? "", { ipv4: 16, ipv6: 48 }) ?? "";
  return createHmac("sha256", secret).update(`${agent}\n${network}`).digest("base64url");
}

/** Idempotent, and under an advisory lock on PostgreSQL, as the mail table is (see outbox.ts). */
export async function createDeviceTable(db: AppDatabase<any>, kind: DatabaseKind): Promise<void> {
  const create = async (target: AppDatabase<any>) => {
    await target.schema
      .createTable(DEVICE_TABLE)
      .ifNotExists()
      .addColumn("user_id", "text", (c) => c.notNull())
      .addColumn("fingerprint", "text", (c) => c.notNull())
      .addColumn("seen_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint(`${DEVICE_TABLE}_pk`, ["user_id", "fingerprint"])
      .execute();
  };
  if (kind !== "postgres") return create(db);
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext('trellis_mail_device'))`.execute(trx);
    await create(trx as unknown as AppDatabase<any>);
  });
}

export type Sighting = "first" | "known" | "new";

/**
 * Remembers that `userId` signed in from `fingerprint` and says whether it was known: "first" when
 * the user had no device remembered yet, "new" when they had others.
 */
export async function sighted(db: AppDatabase<any>, userId: string, fingerprint: string): Promise<Sighting> {
  const now = new Date().toISOString();
  const known = (await db.selectFrom(DEVICE_TABLE).select(["fingerprint", "seen_at"]).where("user_id", "=", userId).orderBy("seen_at", "desc").execute()) as { fingerprint: string; seen_at: string }[];
  if (known.some((row) => row.fingerprint === fingerprint)) {
    await db.updateTable(DEVICE_TABLE).set({ seen_at: now }).where("user_id", "=", userId).where("fingerprint", "=", fingerprint).execute();
    return "known";
  }
  const inserted = await db
    .insertInto(DEVICE_TABLE)
    .values({ user_id: userId, fingerprint, seen_at: now })
    .onConflict((conflict) => conflict.columns(["user_id", "fingerprint"]).doNothing())
    .returning("fingerprint")
    .executeTakeFirst();
  // Two sign-ins from the same new device at once: one of them tells.
  if (!inserted) return "known";
  const stale = known.slice(KEPT - 1).map((row) => row.fingerprint);
  if (stale.length > 0) await db.deleteFrom(DEVICE_TABLE).where("user_id", "=", userId).where("fingerprint", "in", stale).execute();
  return known.length === 0 ? "first" : "new";
}

export async function forgetDevices(db: AppDatabase<any>, userId: string): Promise<void> {
  await db.deleteFrom(DEVICE_TABLE).where("user_id", "=", userId).execute();
}

import { RpcError } from "../../kernel/index.js";

/**
 * The open streams of one resource's `live` procedure: at most `max` in all. The last third of the
 * slots (`floor(max / 3)`) is kept for callers holding fewer than `maxPerCaller`: a caller is never
 * refused while most of the slots are free, and one caller cannot take every slot and lock everyone
 * else out (with `max` 2 or less nothing is kept: one caller's second stream is answered).
 * Taken synchronously (no await between the check and the count), so both caps hold exactly under
 * concurrent subscribes; each slot is given back exactly once.
 */
export interface LiveSlots {
  /** Takes a slot for `caller` or throws 429; the returned function gives it back (idempotent). */
  take(caller: string): () => void;
}

export function liveSlots(resource: string, max: number, maxPerCaller: number): LiveSlots {
  let open = 0;
  const nearlyFull = max - Math.floor(max / 3);
  // Only callers holding a slot have an entry, so the map is bounded by `max`.
  const byCaller = new Map<string, number>();
  return {
    take(caller) {
      if (open >= max) throw new RpcError("TOO_MANY_REQUESTS", { message: `At most ${max} live ${resource} streams may be open` });
      const mine = byCaller.get(caller) ?? 0;
      if (mine >= maxPerCaller && open >= nearlyFull) {
        throw new RpcError("TOO_MANY_REQUESTS", {
          message: `At most ${maxPerCaller} live ${resource} streams may be open per caller while the resource is nearly full (${open} of ${max} open); close one first`,
        });
      }
      open++;
      byCaller.set(caller, mine + 1);
      let held = true;
      return () => {
        if (!held) return;
        held = false;
        open--;
        const left = byCaller.get(caller)! - 1;
        if (left === 0) byCaller.delete(caller);
        else byCaller.set(caller, left);
      };
    },
  };
}

/**
 * Reading a live query's snapshots in tests: the next one within a time limit, or the first that
 * passes a check (a stream holds only the newest snapshot, so earlier ones may be skipped).
 */

/** The iterator's next result, or a "no snapshot in time" failure after `ms`. */
export function nextSnapshot<T>(iterator: AsyncIterator<T>, ms = 10_000): Promise<IteratorResult<T>> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("no snapshot in time")), ms)));
  return Promise.race([iterator.next(), late]).finally(() => clearTimeout(timer));
}

/** Reads snapshots until one passes `check`; fails when the stream ends or none comes within `ms`. */
export async function untilSnapshot<T>(iterator: AsyncIterator<T>, check: (value: T) => boolean, ms = 10_000): Promise<T> {
  for (;;) {
    const { value, done } = await nextSnapshot(iterator, ms);
    if (done) throw new Error("the stream ended");
    if (check(value)) return value;
  }
}

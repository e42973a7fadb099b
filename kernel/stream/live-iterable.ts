/**
 * `liveIterable(source, options)`: the guarantees of a resource's `live` procedure for a
 * hand-written one. It wraps a stream (usually `context.db.query.<table>.live(...)`):
 *
 * - every `revalidateMs` it runs `revalidate()` (re-check the caller's permission); when that throws,
 *   the stream ends with that error within the interval, even on an idle table, and no snapshot is
 *   handed out once a check is due until that check has passed;
 * - `onRelease` runs exactly once, on abort of `signal`, on `return()`, on the end of the source,
 *   or on a failed revalidation (release a subscription slot there);
 * - its timer never keeps the process alive.
 *
 * Do the permission checks and slot reservation before calling it, in the procedure's handler, so
 * 401, 403 and 429 are real HTTP statuses rather than errors inside an open stream.
 */
export interface LiveIterableOptions {
  signal?: AbortSignal;
  /** @default 30000; `false` never re-checks */
  revalidateMs?: number | false;
  revalidate?: () => unknown;
  onRelease?: () => void;
}

export function liveIterable<T>(source: AsyncIterator<T> & Partial<AsyncIterable<T>>, options: LiveIterableOptions = {}): AsyncIterableIterator<T> {
  let failure = undefined as { error: unknown } | undefined;
  let released = false;
  const interval = options.revalidateMs === undefined ? 30_000 : options.revalidateMs;
  const release = () => {
    if (released) return;
    released = true;
    if (timer) clearInterval(timer);
    options.signal?.removeEventListener("abort", stop);
    void source.return?.();
    options.onRelease?.();
  };
  const stop = () => release();
  // The caller checked at subscribe; a check is due `interval` after the start of the last good one.
  let checkedAt = Date.now();
  let checking: Promise<void> | undefined;
  const run = async () => {
    const startedAt = Date.now();
    try {
      await options.revalidate!();
      checkedAt = startedAt;
    } catch (error) {
      failure ??= { error };
      // Ending the source wakes a reader waiting on an idle table.
      release();
    }
  };
  // One check at a time: the timer and a waiting snapshot share the one in flight.
  const check = () => (checking ??= run().finally(() => (checking = undefined)));
  const checks = options.revalidate !== undefined && interval !== false;
  const timer = checks ? setInterval(() => void check(), interval) : undefined;
  timer?.unref?.();
  options.signal?.addEventListener("abort", stop, { once: true });
  if (options.signal?.aborted) release();

  const iterator: AsyncIterableIterator<T> = {
    next: async () => {
      const failed = () => failure;
      if (failed()) throw failed()!.error;
      if (released) return { done: true, value: undefined };
      const result = await source.next();
      // A snapshot ready once a check is due waits for a check that started at most `interval`
      // before it: the one running (when recent enough), else a fresh one. So a revoked caller
      // gets nothing after its check fell due, however late the timer or slow the lookup.
      const readyAt = Date.now();
      while (checks && !released && readyAt - checkedAt >= (interval as number)) await check();
      if (failed()) throw failed()!.error;
      if (result.done) release();
      return result;
    },
    return: async (value?: unknown) => {
      release();
      return { done: true, value: value as T };
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}

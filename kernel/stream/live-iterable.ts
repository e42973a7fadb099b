/**
 * `liveIterable(source, options)`: the guarantees of a resource's `live` procedure for a
 * hand-written one. It wraps a stream (usually `context.db.query.<table>.live(...)`):
 *
 * - every `revalidateMs` it runs `revalidate()` (re-check the caller's permission); when that throws,
 *   the stream ends with that error within the interval, even on an idle table;
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
  const timer =
    options.revalidate && interval !== false
      ? setInterval(async () => {
          try {
            await options.revalidate!();
          } catch (error) {
            failure ??= { error };
            // Ending the source wakes a reader waiting on an idle table.
            release();
          }
        }, interval)
      : undefined;
  timer?.unref?.();
  options.signal?.addEventListener("abort", stop, { once: true });
  if (options.signal?.aborted) release();

  const iterator: AsyncIterableIterator<T> = {
    next: async () => {
      const failed = () => failure;
      if (failed()) throw failed()!.error;
      if (released) return { done: true, value: undefined };
      const result = await source.next();
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

/**
 * A wait with a limit that names what it waited for: a close, an exit or a start that hangs fails
 * the test with "<what> did not finish within N s" instead of a bare hook or test timeout that
 * names no step. The limit only bounds the wait: the promise's own failure passes through as is.
 */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * `promise`, or a rejection with `Error(message)` when it has not settled after `ms` (the timer is
 * cleared either way). For probes and remote calls that must answer in time: the health check, a
 * reconnecting Redis client that queues commands meanwhile.
 */
export function within<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

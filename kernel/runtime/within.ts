/**
 * `promise`, or a rejection with `Error(message)` when it has not settled after `ms` (the timer is
 * cleared either way). For probes and remote calls that must answer in time: the health check, a
 * reconnecting Redis client that queues commands meanwhile.
 */
export function within<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  // One promise and one timer: the health probe calls this on every request.
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(message)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** How long close() waits for answers in flight before it closes the app under them. */
export const DRAIN_MS = 10_000;
/** How long a connection may take to finish writing once the app is closed (an ended stream's last event). */
export const STREAM_END_MS = 1_000;

/** Counts promises not yet settled; `settled(ms)` waits for none to be left, or for `ms`. */
export function inFlight() {
  let count = 0;
  let idle: (() => void) | undefined;
  const done = () => {
    if (--count === 0) idle?.();
  };
  return {
    track<T>(answer: T | Promise<T>): T | Promise<T> {
      if (!(answer instanceof Promise)) return answer;
      count++;
      answer.then(done, done);
      return answer;
    },
    settled(ms: number): Promise<void> {
      if (count === 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        idle = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    },
  };
}

/**
 * The servers that close on SIGINT/SIGTERM, behind one listener per signal: on a signal every one
 * closes, and only then is the signal raised again (a listener per server re-raised it as soon as
 * its own close resolved, killing the process under the others; a closed server's stayed behind).
 * Node, Bun and Deno all deliver signals through `process`.
 */
export const signals = (() => {
  const closers = new Set<() => Promise<void>>();
  const onSignal = (signal: NodeJS.Signals) => {
    void Promise.allSettled([...closers].map((close) => close())).then(() => process.kill(process.pid, signal));
  };
  const listen = (on: boolean) => {
    for (const signal of ["SIGINT", "SIGTERM"] as const) on ? process.once(signal, onSignal) : process.off(signal, onSignal);
  };
  return {
    watch(close: () => Promise<void>) {
      if (closers.size === 0) listen(true);
      closers.add(close);
    },
    forget(close: () => Promise<void>) {
      if (closers.delete(close) && closers.size === 0) listen(false);
    },
  };
})();

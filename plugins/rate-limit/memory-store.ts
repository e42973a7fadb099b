import type { RateLimitHit, RateLimitStore } from "../../kernel/index.js";

export interface MemoryRateLimitStoreOptions {
  /**
   * Keys held at most. When full after sweeping expired windows, new keys share one overflow
   * bucket (so a flood of new addresses cannot grow memory, and cannot escape the limit either).
   * @default 10000
   */
  maxKeys?: number;
  /**
   * How often expired windows are swept, in milliseconds.
   * @default 60000
   */
  sweepIntervalMs?: number;
}

export interface MemoryRateLimitStore extends RateLimitStore {
  hit(key: string, windowMs: number, cost?: number): RateLimitHit;
  /** Keys currently held (the overflow bucket included). */
  readonly size: number;
  /** Stops the sweep timer and drops every counter. */
  close(): void;
}

const OVERFLOW = "\0overflow";

/**
 * The default counter store: per process, so with several replicas the effective limit is `max`
 * times the replica count (use `trellis/redis` to share counters). Answers synchronously.
 */
export function memoryRateLimitStore(options: MemoryRateLimitStoreOptions = {}): MemoryRateLimitStore {
  const maxKeys = options.maxKeys ?? 10_000;
  const sweepIntervalMs = options.sweepIntervalMs ?? 60_000;
  const windows = new Map<string, RateLimitHit>();
  let timer: ReturnType<typeof setInterval> | undefined;
  let closed = false;

  const sweep = (now: number) => {
    for (const [key, window] of windows) if (window.resetAt <= now) windows.delete(key);
    if (windows.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };

  return {
    hit(key, windowMs, cost = 1) {
      const now = Date.now();
      let window = windows.get(key);
      if (window && window.resetAt > now) {
        window.count += cost;
        return { count: window.count, resetAt: window.resetAt };
      }
      if (!window && key !== OVERFLOW && windows.size >= maxKeys) {
        sweep(now);
        if (windows.size >= maxKeys) return this.hit(OVERFLOW, windowMs, cost);
      }
      window = { count: cost, resetAt: now + windowMs };
      windows.set(key, window);
      // Only while something is held; never keeps the process alive.
      if (!timer && !closed) {
        timer = setInterval(() => sweep(Date.now()), sweepIntervalMs);
        timer.unref?.();
      }
      return { count: cost, resetAt: window.resetAt };
    },
    get size() {
      return windows.size;
    },
    close() {
      closed = true;
      if (timer) clearInterval(timer);
      timer = undefined;
      windows.clear();
    },
  };
}

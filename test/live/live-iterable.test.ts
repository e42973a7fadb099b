import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { liveIterable } from "../../kernel/index.js";

/** A source whose snapshots the test hands out, one `next()` at a time. */
function controlled() {
  const ready: string[] = [];
  let waiting: ((result: IteratorResult<string>) => void) | undefined;
  let ended = false;
  return {
    push(value: string) {
      if (waiting) waiting({ done: false, value }), (waiting = undefined);
      else ready.push(value);
    },
    next: (): Promise<IteratorResult<string>> =>
      ended ? Promise.resolve({ done: true, value: undefined }) : ready.length > 0 ? Promise.resolve({ done: false, value: ready.shift()! }) : new Promise((resolve) => (waiting = resolve)),
    return: async (): Promise<IteratorResult<string>> => {
      ended = true;
      waiting?.({ done: true, value: undefined });
      return { done: true, value: undefined };
    },
  };
}

/**
 * A stream re-checked every 10 ms by a check that reads `revoked` when it starts and answers
 * `checkMs` later (5 ms unless told).
 */
function revocable(checkMs = 5) {
  const state = { revoked: false, checks: 0 };
  const source = controlled();
  const stream = liveIterable(source, {
    revalidateMs: 10,
    revalidate: async () => {
      state.checks++;
      const revoked = state.revoked;
      await new Promise((resolve) => setTimeout(resolve, checkMs));
      if (revoked) throw new Error("revoked");
    },
  });
  const outcome = () =>
    stream.next().then(
      (result) => (result.done ? "done" : `delivered ${result.value}`),
      (error: Error) => error.message,
    );
  return { state, source, stream, outcome };
}

describe("liveIterable revalidation", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("never hands out a snapshot offered once a check is due, whether the check is running or done (every ms of 0-40)", async () => {
    for (let offeredAt = 0; offeredAt <= 40; offeredAt++) {
      const { state, source, outcome } = revocable();
      state.revoked = true; // right after the subscribe-time check
      await vi.advanceTimersByTimeAsync(offeredAt);
      source.push("late");
      const result = outcome();
      await vi.advanceTimersByTimeAsync(50);
      // Due at 10 ms: before it the snapshot may leave, from it on never.
      expect(await result, `offered at ${offeredAt} ms`).toBe(offeredAt < 10 ? "delivered late" : "revoked");
    }
  });

  it("checks before handing out a snapshot when the clock passed the due time but the timer has not fired", async () => {
    const { state, source, outcome } = revocable();
    await vi.advanceTimersByTimeAsync(3);
    state.revoked = true;
    // A blocked event loop: wall time moves on, timers have not run.
    vi.setSystemTime(Date.now() + 25);
    source.push("late");
    const result = outcome();
    await vi.advanceTimersByTimeAsync(6);
    expect(await result).toBe("revoked");
  });

  it("does not take the verdict of a check that started too long before the snapshot (a lookup slower than the interval)", async () => {
    const { state, source, outcome } = revocable(30);
    await vi.advanceTimersByTimeAsync(11); // check A started at 10 ms, reading "signed in"
    state.revoked = true;
    await vi.advanceTimersByTimeAsync(14);
    source.push("late"); // at 25 ms: A is still running, and started 15 ms before
    const result = outcome();
    await vi.advanceTimersByTimeAsync(100);
    expect(await result).toBe("revoked");
    expect(state.checks).toBe(2);
  });

  it("hands out snapshots while checks pass, sharing one check between the timer and a waiting snapshot", async () => {
    const { state, source, stream, outcome } = revocable();
    for (let i = 0; i < 5; i++) {
      await vi.advanceTimersByTimeAsync(11); // the timer's check is in flight
      source.push(`s${i}`);
      const result = outcome();
      await vi.advanceTimersByTimeAsync(5);
      expect(await result).toBe(`delivered s${i}`);
    }
    // 80 ms: one check per timer tick, never a second one for the snapshot that waited on it.
    expect(state.checks).toBe(8);
    await stream.return!();
    expect(await outcome()).toBe("done");
  });
});

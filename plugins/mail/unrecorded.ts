import type { QueuedMail } from "./delivery.js";
import type { MailQueue } from "./queue.js";

/**
 * Messages queued in this process whose row is not written yet, by address. A message's row is
 * written when its delivery starts (a later turn of the event loop, or when the jobs worker picks
 * it up), so the development outbox asked right after the request that queued a message waits for
 * it instead of answering with the address's previous one.
 */
export class Unrecorded {
  readonly #waiting = new Map<string, { to: string; done: Promise<void>; settle: () => void }>();

  /** `queue`, noting each message until `settled` is called with its id. */
  track(queue: () => MailQueue): MailQueue {
    return {
      push: (mail: QueuedMail) => {
        let settle!: () => void;
        const done = new Promise<void>((resolve) => (settle = resolve));
        this.#waiting.set(mail.id, { to: mail.to.toLowerCase(), done, settle });
        queue().push(mail);
      },
      idle: () => queue().idle(),
    };
  }

  /** The row of `id` is written, or the message was dropped. */
  settled(id: string): void {
    const entry = this.#waiting.get(id);
    if (!entry) return;
    this.#waiting.delete(id);
    entry.settle();
  }

  /** Resolves when every message to `to` queued so far is recorded, or after `timeoutMs`. */
  async recorded(to: string, timeoutMs: number): Promise<void> {
    const address = to.toLowerCase();
    const pending = [...this.#waiting.values()].filter((entry) => entry.to === address).map((entry) => entry.done);
    if (pending.length === 0) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([Promise.all(pending), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
  }
}

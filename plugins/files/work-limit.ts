import { RpcError } from "../../kernel/index.js";
import { FILES_IMAGES_BUSY } from "./errors.js";

/**
 * At most `concurrency` image transforms at once, `queue` more waiting their turn; beyond that a
 * request is refused at once with 503 and `Retry-After` rather than piling up decoded images in
 * memory.
 */
export class WorkLimit {
  #running = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(
    readonly concurrency: number,
    readonly queue: number,
  ) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#running >= this.concurrency) {
      if (this.#waiting.length >= this.queue) throw busy();
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else this.#running++;
    try {
      return await work();
    } finally {
      // The slot passes straight to the next in line, so the count never dips between them.
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
  }

  /** Like `run`, but undefined instead of waiting or refusing: for work that may be skipped (a placeholder). */
  tryRun<T>(work: () => Promise<T>): Promise<T> | undefined {
    if (this.#running >= this.concurrency) return undefined;
    return this.run(work);
  }
}

function busy(): RpcError<any, any> {
  return new RpcError(FILES_IMAGES_BUSY, { status: 503, message: "Too many images are being transformed right now; try again shortly", data: { retryAfter: 1 } });
}

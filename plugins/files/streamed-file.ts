import type { FilePart } from "./multipart.js";

/**
 * An uploaded file whose bytes are still arriving: a `File` (so the input schema's `z.file()`
 * admits it) whose `stream()` is the request body's file part, readable once. Its `size` is 0:
 * `received()` counts the bytes the parser passed on, bounded by the upload's limit.
 */
export class StreamedFile extends File {
  readonly #part: FilePart;
  #taken = false;

  constructor(part: FilePart) {
    super([], part.name, { type: part.type });
    this.#part = part;
  }

  /** The part's type as sent: Bun's `File` would add `;charset=utf-8` to a text type. */
  override get type(): string {
    return this.#part.type;
  }

  /** The file's bytes so far; all of them once its stream ended. */
  received(): number {
    return this.#part.size();
  }

  override stream(): ReadableStream<Uint8Array<ArrayBuffer>> {
    if (this.#taken) throw new TypeError("The uploaded file was already read");
    this.#taken = true;
    this.#part.begin();
    return this.#part.body as ReadableStream<Uint8Array<ArrayBuffer>>;
  }

  override arrayBuffer(): Promise<ArrayBuffer> {
    return new Response(this.stream()).arrayBuffer();
  }

  override async text(): Promise<string> {
    return new TextDecoder().decode(await this.arrayBuffer());
  }
}


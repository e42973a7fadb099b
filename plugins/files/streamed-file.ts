/**
 * An uploaded file whose bytes are still arriving: a `File` (so the input schema's `z.file()`
 * admits it) whose `stream()` is the request body's file part, readable once. Its `size` is 0
 * until read: `file.upload` counts the bytes as they pass instead.
 */
export class StreamedFile extends File {
  readonly #body: ReadableStream<Uint8Array>;
  #taken = false;

  constructor(body: ReadableStream<Uint8Array>, name: string, type: string) {
    super([], name, { type });
    this.#body = body;
  }

  override stream(): ReadableStream<Uint8Array<ArrayBuffer>> {
    if (this.#taken) throw new TypeError("The uploaded file was already read");
    this.#taken = true;
    return this.#body as ReadableStream<Uint8Array<ArrayBuffer>>;
  }

  override arrayBuffer(): Promise<ArrayBuffer> {
    return new Response(this.stream()).arrayBuffer();
  }

  override async text(): Promise<string> {
    return new TextDecoder().decode(await this.arrayBuffer());
  }
}


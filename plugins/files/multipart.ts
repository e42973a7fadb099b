import type { BusboyInstance } from "@fastify/busboy";

type BusboyFactory = typeof import("@fastify/busboy").Busboy;
let busboy: Promise<BusboyFactory> | undefined;

/**
 * A streamed multipart upload. The parser is loaded on the first upload, not when Trellis is
 * imported: it touches Node's `Buffer` as it loads, and Trellis imports where there is none.
 */
export async function openMultipart(request: Request, limits: MultipartLimits, needs: readonly string[] = []): Promise<MultipartUpload> {
  const factory = await (busboy ??= import("@fastify/busboy").then((module) => module.Busboy));
  return new MultipartUpload(request, limits, factory, needs);
}
import { RpcError } from "../../kernel/index.js";

export interface MultipartLimits {
  /** Largest file; one byte more and the file's stream errors with 413, the rest of the body unread. */
  fileBytes: number;
  /** Largest text field (the RPC envelope's `data`, a REST `attach`). */
  fieldBytes: number;
}

/** The one file part of an upload, its bytes streamed as the request body arrives. */
export interface FilePart {
  field: string;
  name: string;
  type: string;
  body: ReadableStream<Uint8Array>;
  /** The file's bytes so far (all of them once `body` ended). */
  size(): number;
  /** Called as the reader starts: the body is read past the file's start only from then on. */
  begin(): void;
}

/** What precedes the file: the text fields, and the file itself (undefined when the body has none). */
export interface MultipartHead {
  fields: Map<string, string>;
  file: FilePart | undefined;
}

const MAX_FIELDS = 16;

/** A file part held until the body ends (it came before a field the reader needs). */
interface Spooled {
  field: string;
  name: string;
  type: string;
  chunks: Uint8Array[];
}

const bad = (message: string) => new RpcError("BAD_REQUEST", { message });
const tooLarge = (what: string, limit: number) => new RpcError("PAYLOAD_TOO_LARGE", { status: 413, message: `${what} is larger than ${limit} bytes` });

/**
 * `multipart/form-data` read as a stream: the request body is read a chunk at a time into the
 * parser, only as fast as the file's reader takes the bytes, and never gathered. The head resolves
 * when the file part starts or the body ends. The file's stream ends only once the whole body was
 * parsed, so a truncated body or a part after the file fails it.
 *
 * Parts may come in any order: a file part that arrives before a field the reader `needs` (the RPC
 * envelope's `data`) is spooled, its bytes held (at most `fileBytes`: one more is the 413) until the
 * body ends, and the head resolves then, with every field and the spooled file.
 */
export class MultipartUpload {
  /** Bytes of the request body read so far. */
  received = 0;
  /** Bytes of the file part parsed so far (at most `limits.fileBytes`: one more fails the upload). */
  fileBytes = 0;
  readonly head: Promise<MultipartHead>;
  #failure: unknown;
  #settle!: { resolve(head: MultipartHead): void; reject(error: unknown): void };
  #fields = new Map<string, string>();
  #file: ReadableStreamDefaultController<Uint8Array> | undefined;
  #fileEnded = false;
  #finished = false;
  /** Ends the pump's wait for the parser (resolved early when the upload fails). */
  #wake: (() => void) | undefined;
  /** Ends the pump's wait for the file's reader to want more (or for a failure). */
  #room: (() => void) | undefined;
  /** Whether the file's reader began (`begin()`); until then no byte of the file is read. */
  #began = false;
  /** The current part's `Content-Type` as sent (the parser keeps only its essence, and says `text/plain` when absent). */
  #partType: string | undefined;
  /** A file part that came before a needed field: its bytes, held until the body ends. */
  #spooled: Spooled | undefined;
  readonly #reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  readonly #parser: BusboyInstance | undefined;

  constructor(
    request: Request,
    readonly limits: MultipartLimits,
    Busboy: BusboyFactory,
    /** Fields the reader needs before the file; a file arriving before them is spooled. */
    private readonly needs: readonly string[] = [],
  ) {
    this.head = new Promise((resolve, reject) => (this.#settle = { resolve, reject }));
    // Handled here too: a head nobody awaits (a request refused before its input was read) is no unhandled rejection.
    this.head.catch(() => {});
    try {
      this.#parser = Busboy({
        headers: { "content-type": request.headers.get("content-type") ?? "" },
        limits: { fileSize: limits.fileBytes, fieldSize: limits.fieldBytes, files: 1, fields: MAX_FIELDS, parts: MAX_FIELDS + 1, headerPairs: 16 },
      });
    } catch (error) {
      this.#fail(bad(`The multipart body cannot be read: ${(error as Error).message}`));
      return;
    }
    this.#listen(this.#parser);
    this.#keepPartTypes(this.#parser);
    if (!request.body) {
      this.#fail(bad("The request has no body: expected multipart/form-data with a file"));
      return;
    }
    this.#reader = request.body.getReader();
    void this.#pump(this.#reader, this.#parser);
  }

  /**
   * The file's reader is starting: until this call the body is read no further than the file's
   * first chunk, so an upload refused before its bytes are stored (401, 415) reads almost nothing.
   */
  begin(): void {
    this.#began = true;
    this.#room?.();
  }

  /** Stops reading: the body is cancelled and the file's stream, if still open, errors. Idempotent. */
  dispose(): void {
    if (!this.#finished || !this.#fileEnded) this.#fail(bad("The upload was not read to its end"));
  }

  #listen(parser: BusboyInstance): void {
    parser.on("field", (name: string, value: string, _nameCut: boolean, valueCut: boolean) => {
      if (valueCut) return this.#fail(tooLarge(`Field "${name}"`, this.limits.fieldBytes));
      if (this.#file) return this.#fail(bad(`The field "${name}" comes after the file: send every field before the file`));
      if (this.#spooled && this.#fields.has(name)) return this.#fail(bad(`The field "${name}" is sent twice`));
      this.#fields.set(name, value);
    });
    parser.on("file", (field: string, stream: NodeJS.ReadableStream, sentName: string) => {
      const type = this.#partType ?? "";
      // The escapes an HTML form applies to a file name (WHATWG multipart/form-data encoding), undone.
      const name = sentName.replace(/%0A|%0D|%22/g, (escape) => ({ "%0A": "\n", "%0D": "\r", "%22": '"' })[escape]!);
      if (this.needs.some((needed) => !this.#fields.has(needed))) return this.#spool(stream, { field, name, type, chunks: [] });
      const body = new ReadableStream<Uint8Array>(
        {
          start: (controller) => {
            this.#file = controller;
            // Flowing: the parser's output goes straight to the queue. Backpressure is the pump's: it
            // reads the next chunk of the body only while the queue has room (see `#pump`).
            stream.on("data", (chunk: Uint8Array) => {
              if (this.#failure !== undefined) return;
              this.fileBytes += chunk.byteLength;
              controller.enqueue(chunk);
            });
            stream.on("limit", () => this.#fail(tooLarge("File", this.limits.fileBytes)));
            stream.on("end", () => ((this.#fileEnded = true), this.#close()));
            stream.on("error", (error: Error) => this.#fail(bad(`The multipart body is malformed: ${error.message}`)));
          },
          pull: () => this.#room?.(),
          cancel: (reason) => this.#fail(reason ?? bad("The upload was cancelled")),
        },
        // Up to 1 MiB parsed ahead of the reader (parsing overlaps the store's writes), once it began.
        new ByteLengthQueuingStrategy({ highWaterMark: 1024 * 1024 }),
      );
      this.#settle.resolve({ fields: this.#fields, file: { field, name, type, body, size: () => this.fileBytes, begin: () => this.begin() } });
    });
    parser.on("filesLimit", () => this.#fail(bad("An upload carries one file")));
    parser.on("fieldsLimit", () => this.#fail(bad(`An upload carries at most ${MAX_FIELDS} fields`)));
    parser.on("partsLimit", () => this.#fail(bad(`An upload carries at most ${MAX_FIELDS} fields`)));
    parser.on("error", (error: Error) => this.#fail(bad(`The multipart body is malformed: ${error.message}`)));
    parser.on("finish", () => {
      this.#finished = true;
      if (!this.#file) {
        this.#fileEnded = true;
        this.#settle.resolve({ fields: this.#fields, file: this.#spooled && this.#spooledFile(this.#spooled) });
      }
      this.#close();
    });
  }

  /** Holds a file part that came before a needed field (the pump reads on meanwhile: nothing waits for a reader). */
  #spool(stream: NodeJS.ReadableStream, spooled: Spooled): void {
    this.#spooled = spooled;
    stream.on("data", (chunk: Uint8Array) => {
      if (this.#failure !== undefined) return;
      this.fileBytes += chunk.byteLength;
      // The parser reuses no buffer it emitted, so the chunk is kept as is.
      spooled.chunks.push(chunk);
    });
    stream.on("limit", () => this.#fail(tooLarge("File", this.limits.fileBytes)));
    stream.on("error", (error: Error) => this.#fail(bad(`The multipart body is malformed: ${error.message}`)));
  }

  #spooledFile({ field, name, type, chunks }: Spooled): FilePart {
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    });
    chunks.length = 0;
    return { field, name, type, body, size: () => this.fileBytes, begin: () => this.begin() };
  }

  /**
   * Records each part's raw `Content-Type` before the parser reads it: a file without one is stored
   * as `application/octet-stream` (never taken for `text/plain`), and its parameters are kept. The
   * parser's multipart reader (Dicer) is reached through busboy's instance (a pinned version).
   */
  #keepPartTypes(parser: BusboyInstance): void {
    const dicer = (parser as unknown as { _parser?: { parser?: NodeJS.EventEmitter } })._parser?.parser;
    if (!dicer) throw new Error("@fastify/busboy changed shape: its multipart reader is not where Trellis expects it");
    dicer.on("part", (part: NodeJS.EventEmitter) => {
      part.prependListener("header", (header: Record<string, string[] | undefined>) => {
        this.#partType = header["content-type"]?.[0];
      });
    });
  }

  /**
   * The body into the parser, one chunk at a time, and once the file started only while its reader
   * wants more: a reader that is behind (or never comes, a refused upload) stops the reading.
   */
  async #pump(reader: ReadableStreamDefaultReader<Uint8Array>, parser: BusboyInstance): Promise<void> {
    try {
      for (;;) {
        while (this.#file && !this.#fileEnded && this.#failure === undefined && (!this.#began || (this.#file.desiredSize ?? 0) <= 0)) {
          await new Promise<void>((resolve) => (this.#room = resolve));
          this.#room = undefined;
        }
        if (this.#failure !== undefined) return;
        const { done, value } = await reader.read();
        if (this.#failure !== undefined) return;
        if (done) return void parser.end();
        this.received += value.byteLength;
        await new Promise<void>((resolve, reject) => {
          this.#wake = resolve;
          parser.write(value, (error?: Error | null) => (error ? reject(error) : resolve()));
        });
        this.#wake = undefined;
        if (this.#failure !== undefined) return;
      }
    } catch {
      // A body that fails to arrive is the client's doing (it hung up): a 400, never a server error.
      if (this.#failure === undefined) this.#fail(bad("The request body ended before the upload did"));
    }
  }

  #close(): void {
    if (this.#finished && this.#fileEnded && this.#failure === undefined) this.#file?.close();
  }

  #fail(error: unknown): void {
    if (this.#failure !== undefined) return;
    this.#failure = error;
    this.#settle.reject(error);
    try {
      this.#file?.error(error);
    } catch {
      // Already closed: the reader had every byte.
    }
    this.#reader?.cancel(error).catch(() => {});
    this.#parser?.removeAllListeners("finish");
    this.#parser?.on("error", () => {});
    this.#parser?.destroy();
    this.#wake?.();
    this.#room?.();
  }
}

/** Multipart request bodies built by hand, streamed a chunk at a time, counting what the server pulls. */

export const BOUNDARY = "----trellis-stream-boundary";
const encoder = new TextEncoder();

export interface BodyPart {
  name: string;
  /** A text field's value. */
  value?: string;
  /** A file part: its bytes (generated on the fly: `size` bytes of `fill`), name and type header. */
  file?: { size: number; filename?: string; type?: string | null; fill?: number };
}

export interface BodyOptions {
  chunk?: number;
  /** The stream errors (a client hanging up) once this many file bytes were sent. */
  failAfter?: number;
  /** Leave out the closing boundary (a truncated body). */
  unterminated?: boolean;
}

export interface GeneratedBody {
  stream: ReadableStream<Uint8Array>;
  contentType: string;
  /** The body's exact length, for a `Content-Length` header as a socket's request carries. */
  length: number;
  /** Bytes the server pulled so far. */
  pulled(): number;
  /** Every chunk handed out, to check the server stored them without copying. */
  chunks: Uint8Array[];
}

export function multipartBody(parts: BodyPart[], options: BodyOptions = {}): GeneratedBody {
  const chunkSize = options.chunk ?? 64 * 1024;
  const pieces: (Uint8Array | { size: number; fill: number })[] = [];
  for (const part of parts) {
    if (part.file) {
      const { filename = "f.bin", type = "application/octet-stream", size, fill = 7 } = part.file;
      const typeLine = type === null ? "" : `Content-Type: ${type}\r\n`;
      pieces.push(encoder.encode(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${filename}"\r\n${typeLine}\r\n`));
      pieces.push({ size, fill });
      pieces.push(encoder.encode("\r\n"));
    } else {
      pieces.push(encoder.encode(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value ?? ""}\r\n`));
    }
  }
  if (!options.unterminated) pieces.push(encoder.encode(`--${BOUNDARY}--\r\n`));
  let pulled = 0;
  let fileSent = 0;
  let index = 0;
  let offset = 0;
  const chunks: Uint8Array[] = [];
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const piece = pieces[index];
      if (!piece) return controller.close();
      let out: Uint8Array;
      if (piece instanceof Uint8Array) {
        out = piece;
        index++;
      } else {
        if (options.failAfter !== undefined && fileSent >= options.failAfter) return controller.error(new Error("the client went away"));
        const length = Math.min(chunkSize, piece.size - offset);
        out = new Uint8Array(length).fill(piece.fill);
        offset += length;
        fileSent += length;
        if (offset >= piece.size) (index++, (offset = 0));
      }
      pulled += out.byteLength;
      chunks.push(out);
      controller.enqueue(out);
    },
  });
  const length = pieces.reduce((sum, piece) => sum + (piece instanceof Uint8Array ? piece.byteLength : piece.size), 0);
  return { stream, contentType: `multipart/form-data; boundary=${BOUNDARY}`, length, pulled: () => pulled, chunks };
}

/** The RPC envelope for `file.upload` (the file as form part `0`). */
export function rpcEnvelope(input: Record<string, unknown> = {}): BodyPart {
  return { name: "data", value: JSON.stringify({ json: { ...input, file: {} }, maps: [["file"]] }) };
}

/** A POST of the body with its declared length, as `serve()` hands a socket's request to `handle()`. */
export function streamedRequest(url: string, body: GeneratedBody, headers: Record<string, string> = {}): Request {
  const declared = { "content-type": body.contentType, "content-length": String(body.length) };
  return new Request(url, { method: "POST", headers: { ...headers, ...declared }, body: body.stream, duplex: "half" } as RequestInit);
}

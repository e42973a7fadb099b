import { RpcError, definePlugin, errorResponse, type AppPlugin, type HttpMiddleware, type RequestEvent } from "../../kernel/index.js";

export interface BodyLimitConfig {
  /**
   * Largest request body accepted, in bytes; larger ones get 413 before any handler reads them.
   * @default 1048576 (1 MiB)
   */
  maxBytes?: number;
}

const BODYLESS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Request body limit at the `edge` stage. A declared `Content-Length` over the limit is refused
 * without reading a byte (Node's HTTP parser holds a body to its declared length). A chunked body
 * (`Transfer-Encoding`) is counted as it is read, and refused as soon as it passes the limit. A
 * request with neither header was built in process (HTTP/1.1 requires one of them for a body): it
 * is counted only when its route sets its own limit (an upload, whose body may be a stream the
 * caller generates); otherwise its body is already in the caller's memory.
 */
export function bodyLimitPlugin(config: BodyLimitConfig = {}): AppPlugin {
  const maxBytes = config.maxBytes ?? 1024 * 1024;
  return definePlugin({
    name: "body-limit",
    stage: "edge",
    build: () => ({ middleware: [bodyLimit(maxBytes)] }),
  });
}

function bodyLimit(maxBytes: number): HttpMiddleware {
  const tooLarge = (event: RequestEvent, limit: number) =>
    errorResponse(
      new RpcError("PAYLOAD_TOO_LARGE", { status: 413, message: `Request body is larger than ${limit} bytes` }),
      event.isRpc,
    );
  // Not `async`: on the common path it hands `next()`'s promise straight through.
  const middleware: HttpMiddleware = (event, next) => {
    if (BODYLESS.has(event.method)) return next();
    // A route or procedure that sets its own limit (an upload) was matched before any middleware ran.
    const limit = event.bodyLimit ?? maxBytes;
    const declared = event.headers.get("content-length");
    if (declared !== null) return Number(declared) > limit ? Promise.resolve(tooLarge(event, limit)) : next();
    // The header first: reading `request.body` may build a stream the common path never needs.
    const counted = event.bodyLimit !== undefined || event.headers.has("transfer-encoding");
    if (!counted || !event.request.body) return next();
    return readCapped(event.request.body, limit).then((chunks) => {
      if (!chunks) return tooLarge(event, limit);
      event.request = new Request(event.request, { body: replay(chunks), duplex: "half" } as RequestInit);
      return next();
    });
  };
  middleware.displayName = "body-limit:count";
  // A GET, HEAD or OPTIONS carries no body to count: the kernel steps over this middleware for it.
  middleware.passes = (event) => BODYLESS.has(event.method);
  return middleware;
}

/** The body's chunks, or undefined as soon as it passes `maxBytes` (the rest is never read). */
async function readCapped(stream: ReadableStream<Uint8Array>, maxBytes: number): Promise<Uint8Array[] | undefined> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return chunks;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
}

/** The counted chunks as a stream again, without copying them into one buffer. */
function replay(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  let next = 0;
  return new ReadableStream({
    pull(controller) {
      if (next < chunks.length) {
        controller.enqueue(chunks[next]!);
        chunks[next++] = EMPTY; // released as soon as the reader has it
      } else controller.close();
    },
  });
}

const EMPTY = new Uint8Array(0);

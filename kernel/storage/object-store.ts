import type { AppStorage } from "./contract.js";
import { gather } from "./streams.js";

/** The S3 client's `send`, as `@aws-sdk/client-s3`'s `S3Client` has it. */
export interface ObjectStoreClient {
  send(command: any): Promise<any>;
}

interface ObjectInput {
  Bucket: string;
  Key: string;
}

type Command<I> = new (input: I) => unknown;

/**
 * The command classes of `@aws-sdk/client-s3`, passed in so `trellis` never imports the SDK (an
 * optional peer): `{ GetObjectCommand, PutObjectCommand, DeleteObjectCommand }`, plus the four
 * multipart-upload commands for streamed writes that never hold a whole file in memory (without
 * them a streamed write is gathered first and sent as one `PutObject`).
 */
export interface ObjectStoreCommands {
  GetObjectCommand: Command<ObjectInput & { Range?: string }>;
  PutObjectCommand: Command<ObjectInput & { Body: Uint8Array; ContentLength: number }>;
  DeleteObjectCommand: Command<ObjectInput>;
  CreateMultipartUploadCommand?: Command<ObjectInput>;
  UploadPartCommand?: Command<ObjectInput & { UploadId: string; PartNumber: number; Body: Uint8Array; ContentLength: number }>;
  CompleteMultipartUploadCommand?: Command<ObjectInput & { UploadId: string; MultipartUpload: { Parts: { ETag: string; PartNumber: number }[] } }>;
  AbortMultipartUploadCommand?: Command<ObjectInput & { UploadId: string }>;
}

/** The size of each part of a multipart upload (S3 wants at least 5 MiB for every part but the last). */
export const PART_BYTES = 8 * 1024 * 1024;

type Body = { transformToByteArray(): Promise<Uint8Array>; transformToWebStream(): ReadableStream<Uint8Array> };

/**
 * `AppStorage` over an S3-compatible object store: `fromObjectStore(new S3Client(...), { GetObjectCommand,
 * PutObjectCommand, DeleteObjectCommand, ...multipart }, "my-bucket")`. A missing object reads as null.
 */
export function fromObjectStore(client: ObjectStoreClient, commands: ObjectStoreCommands, bucket: string): AppStorage {
  const object = (key: string) => ({ Bucket: bucket, Key: key });
  const fetchBody = async (key: string, range?: string): Promise<Body | undefined | null> => {
    try {
      const output = await client.send(new commands.GetObjectCommand({ ...object(key), ...(range && { Range: range }) }));
      return (output as { Body?: Body }).Body;
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  };
  const put = (key: string, bytes: Uint8Array) => client.send(new commands.PutObjectCommand({ ...object(key), Body: bytes, ContentLength: bytes.byteLength }));
  return {
    async get(key) {
      const body = await fetchBody(key);
      if (body === null) return null;
      return body ? await body.transformToByteArray() : new Uint8Array(0);
    },
    async set(key, bytes) {
      await put(key, bytes);
    },
    async delete(key) {
      await client.send(new commands.DeleteObjectCommand(object(key)));
    },
    async getStream(key, range) {
      const body = await fetchBody(key, range && `bytes=${range.start}-${range.end}`);
      if (body === null) return null;
      return body ? body.transformToWebStream() : new ReadableStream({ start: (controller) => controller.close() });
    },
    async setStream(key, stream) {
      if (!hasMultipart(commands)) return void (await put(key, await gather(stream)));
      const reader = stream.getReader();
      const first = await readPart(reader);
      // A file of one part or less is one PutObject; a larger one a multipart upload, part by part.
      if (first.done) return void (await put(key, first.bytes));
      await multipartUpload(client, commands, object(key), first.bytes, reader);
    },
  };
}

type Multipart = Required<ObjectStoreCommands>;

function hasMultipart(commands: ObjectStoreCommands): commands is Multipart {
  return !!(commands.CreateMultipartUploadCommand && commands.UploadPartCommand && commands.CompleteMultipartUploadCommand && commands.AbortMultipartUploadCommand);
}

/** Parts of `PART_BYTES` as the stream delivers them; a failure aborts the upload, so no object appears. */
async function multipartUpload(client: ObjectStoreClient, commands: Multipart, target: ObjectInput, first: Uint8Array, reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  const { UploadId } = (await client.send(new commands.CreateMultipartUploadCommand(target))) as { UploadId: string };
  const parts: { ETag: string; PartNumber: number }[] = [];
  try {
    let part: { bytes: Uint8Array; done: boolean } = { bytes: first, done: false };
    for (;;) {
      const PartNumber = parts.length + 1;
      const output = (await client.send(new commands.UploadPartCommand({ ...target, UploadId, PartNumber, Body: part.bytes, ContentLength: part.bytes.byteLength }))) as { ETag: string };
      parts.push({ ETag: output.ETag, PartNumber });
      if (part.done) break;
      part = await readPart(reader);
      if (part.done && part.bytes.byteLength === 0) break;
    }
    await client.send(new commands.CompleteMultipartUploadCommand({ ...target, UploadId, MultipartUpload: { Parts: parts } }));
  } catch (error) {
    await reader.cancel(error).catch(() => {});
    await client.send(new commands.AbortMultipartUploadCommand({ ...target, UploadId })).catch(() => {});
    throw error;
  }
}

/** Up to `PART_BYTES` of the stream in one buffer; `done` when the stream ended while reading it. */
async function readPart(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<{ bytes: Uint8Array; done: boolean }> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  while (length < PART_BYTES) {
    const { done, value } = await reader.read();
    if (done) return { bytes: concat(chunks), done: true };
    chunks.push(value);
    length += value.byteLength;
  }
  return { bytes: concat(chunks), done: false };
}

function concat(chunks: Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0));
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

function isMissing(error: unknown): boolean {
  const { name, $metadata } = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return name === "NoSuchKey" || name === "NotFound" || $metadata?.httpStatusCode === 404;
}

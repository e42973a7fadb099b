import { RpcError, writeStream, type AppDatabase, type AppStorage, type ErrorSource, type RequestEvent } from "../../kernel/index.js";
import { cleanName } from "./file-name.js";
import { accepts, storedType } from "./media-type.js";
import type { FileRecord } from "./options.js";
import { FileRows } from "./records.js";
import { StreamedFile } from "./streamed-file.js";

export interface UploadStore {
  storage: AppStorage;
  db: AppDatabase<any>;
  rows: FileRows;
  maxBytes: number;
  accept: readonly string[] | undefined;
  report(error: unknown, source: ErrorSource, event?: RequestEvent): void;
  /** Columns computed from the stored bytes before the row is written (an image's placeholder). */
  describe?(key: string, type: string): Promise<Record<string, unknown>>;
  /** Keys stored beside a file's own (its cached variants), removed with it. */
  derivedKeys?(key: string): string[];
}

/** The type to store for `file`, or the refusal: 413 over `maxBytes` (when the size is known yet), 415 outside `accept`. */
export function admittedType(file: File, limits: Pick<UploadStore, "maxBytes" | "accept">): string {
  // A file still arriving (`StreamedFile`) has no size yet: its bytes are counted as they pass.
  if (!(file instanceof StreamedFile) && file.size > limits.maxBytes) throw tooLarge(limits.maxBytes);
  const type = storedType(file.type);
  if (limits.accept && !accepts(limits.accept, type)) {
    throw new RpcError("UNSUPPORTED_MEDIA_TYPE", { status: 415, message: `File type "${type}" is not accepted; accepted: ${limits.accept.join(", ")}` });
  }
  return type;
}

/**
 * Streams `file` into the store, then inserts its row (and, given `link`, its attachment in the same
 * transaction). Bytes first, then the row: a failure in between leaves at worst an unreferenced
 * blob, never a row without bytes; a failed insert removes the blob again. A stream that fails (too
 * large, cut off) leaves no bytes (the storage contract) and no row.
 */
export async function storeUpload(
  store: UploadStore,
  file: File,
  type: string,
  /** The row's owner and organization, when the schema has those columns. */
  owner: { userId?: string | null; organizationId?: string | null },
  link?: (trx: AppDatabase<any>, id: string) => Promise<unknown>,
): Promise<FileRecord> {
  const { storage, db, rows, maxBytes } = store;
  const { id, key } = FileRows.newIdentity();
  // A streamed file was counted (and bounded) by the multipart parser; any other is counted here.
  let counted = 0;
  const body =
    file instanceof StreamedFile
      ? file.stream()
      : file.stream().pipeThrough(
          new TransformStream<Uint8Array, Uint8Array>({
            transform(chunk, controller) {
              counted += chunk.byteLength;
              if (counted > maxBytes) throw tooLarge(maxBytes);
              controller.enqueue(chunk);
            },
          }),
        );
  try {
    await writeStream(storage, key, body);
  } catch (error) {
    await storage.delete(key).catch((cause) => store.report(cause, "rpc"));
    throw error;
  }
  const size = file instanceof StreamedFile ? file.received() : counted;
  const described = store.describe ? await store.describe(key, type) : {};
  const values = { id, key, name: cleanName(file.name), type, size, ...owner, ...described };
  try {
    if (!link) return (await rows.insert(db, values)).record;
    return await db.transact(async (trx) => {
      const stored = await rows.insert(trx, values);
      await link(trx, id);
      return stored.record;
    });
  } catch (error) {
    await storage.delete(key).catch((cause) => store.report(cause, "rpc"));
    throw error;
  }
}

function tooLarge(maxBytes: number) {
  return new RpcError("PAYLOAD_TOO_LARGE", { status: 413, message: `File is larger than ${maxBytes} bytes` });
}

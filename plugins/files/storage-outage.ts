import { RpcError, type AppStorage, type ErrorSource } from "../../kernel/index.js";

export const STORAGE_UNAVAILABLE_MESSAGE = "Service unavailable: the file storage is not reachable; try again shortly";

/**
 * The app's storage, with every failure of the store itself (an S3 server stopped, a network cut)
 * answered as a 503 that names the storage, the cause reported once to `onError`. Without it the
 * socket error would read as a lost database connection (the same Node codes), or as a 500.
 */
export function outageAware(storage: AppStorage, report: (error: unknown, source: ErrorSource) => void, source: ErrorSource): AppStorage {
  const guard = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      // A deliberate answer raised while the body streamed in (413 over maxBytes) stays what it is.
      if (error instanceof RpcError) throw error;
      report(error, source);
      throw new RpcError("SERVICE_UNAVAILABLE", { status: 503, message: STORAGE_UNAVAILABLE_MESSAGE, cause: error });
    }
  };
  const { getStream, setStream } = storage;
  return {
    get: (key) => guard(() => storage.get(key)),
    set: (key, bytes) => guard(() => storage.set(key, bytes)),
    delete: (key) => guard(() => storage.delete(key)),
    ...(getStream ? { getStream: (key, range) => guard(() => getStream.call(storage, key, range)) } : {}),
    ...(setStream ? { setStream: (key, body) => guard(() => setStream.call(storage, key, body)) } : {}),
  };
}

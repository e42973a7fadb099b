import type { AppStorage, ErrorSource } from "../../kernel/index.js";

/**
 * A deleted file's bytes and every key stored beside them (its cached variants), after the row's
 * commit: a failure is reported and leaves an unreferenced blob, never a row without bytes.
 */
export async function removeBytes(storage: AppStorage, key: string, derivedKeys: ((key: string) => Promise<string[]>) | undefined, report: (error: unknown, source: ErrorSource) => void): Promise<void> {
  await storage.delete(key).catch((error) => report(error, "rpc"));
  const derived = (await derivedKeys?.(key).catch((error) => void report(error, "rpc"))) ?? [];
  for (const each of derived) await storage.delete(each).catch((error) => report(error, "rpc"));
}

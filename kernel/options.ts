import type { KernelHooks } from "./hooks.js";
import type { Logger, LoggerOption } from "./log/logger.js";
import type { OnError } from "./errors.js";
import type { SchemaModel } from "./schema/model.js";
import type { DatabaseConfig } from "./contracts/resources.js";

export interface KernelOptions {
  /** Display name: the OpenAPI title and what `_admin.meta` reports. */
  name?: string;
  /** Public origin of the app. */
  baseUrl?: string;
  db: DatabaseConfig;
  /**
   * Services the app starts with, provided before any plugin runs and set on every request context
   * under their keys (the facade passes `storage`, `secrets` and `kv` this way).
   */
  services?: Readonly<Record<string, unknown>>;
  /**
   * Called for unexpected failures only, with the request's id, method, path and procedure.
   * @default logs the failure and its stack through `logger` (on the console when logging is off)
   */
  onError?: OnError;
  /**
   * Where request lines and failures are logged: pino, or anything with its `info/warn/error/child`
   * shape; `false` for nothing; `"pretty"` or `"json"` for the built-in logger in that format.
   * @default the built-in logger: pretty in a terminal, JSON lines otherwise or when
   * `NODE_ENV=production`; none under a test runner
   */
  logger?: LoggerOption;
}

/**
 * What a built app reads from the kernel that built it. Structural, so the running app and the
 * overview depend on this file rather than on `kernel.ts` (which constructs them).
 */
export interface KernelView {
  readonly hooks: KernelHooks;
  readonly options: KernelOptions;
  readonly onError: OnError;
  readonly logger: Logger | undefined;
  readonly schemas: readonly SchemaModel[];
}

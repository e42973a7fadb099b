import { createRequire } from "node:module";
import type * as OtelApi from "@opentelemetry/api";
import type * as PromClient from "prom-client";

export type Otel = typeof OtelApi;
export type Prom = typeof PromClient;

/**
 * The optional peers, loaded synchronously at build (both ship CommonJS), so `trellis` imports
 * without them and an app that never turns metrics on never loads prom-client. Two copies of
 * `@opentelemetry/api` (this one and the app's ESM import) share one registration: the API keeps
 * its tracer provider and context manager on a global.
 */
const require = createRequire(import.meta.url);

export function loadOtel(): Otel | undefined {
  return load<Otel>("@opentelemetry/api");
}

export function loadProm(): Prom | undefined {
  return load<Prom>("prom-client");
}

function load<T>(name: string): T | undefined {
  try {
    return require(name) as T;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    if (code === "MODULE_NOT_FOUND" && String((error as Error).message).includes(name)) return undefined;
    throw error;
  }
}

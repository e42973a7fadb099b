import type { AppSecrets } from "../contracts/resources.js";
import type { StandardSchemaV1 } from "./standard-schema.js";
import { processEnv } from "../runtime/environment.js";

/** Secrets over a fixed record; `all` is a frozen copy. */
export function fromRecord<T extends Record<string, unknown>>(record: T): AppSecrets<T> {
  const all = Object.freeze({ ...record });
  return Object.freeze({
    all,
    get: <K extends keyof T & string>(key: K) => all[key],
    require: <K extends keyof T & string>(key: K) => {
      const value = all[key];
      if (value === undefined || value === null || value === "") {
        throw new Error(`Secret "${key}" is required but ${value === "" ? "empty" : "not set"}`);
      }
      return value as NonNullable<T[K]>;
    },
  });
}

/** Secrets from the process environment, read once; empty on a runtime without `process` (an edge worker). */
export function fromEnv(env: Record<string, string | undefined> = processEnv()): AppSecrets {
  return fromRecord<Record<string, string | undefined>>(env);
}

/** In-memory secrets for tests and examples. */
export function memorySecrets<T extends Record<string, string | undefined>>(values?: T): AppSecrets<T> {
  return fromRecord((values ?? {}) as T);
}

/**
 * Validates the environment against a Standard Schema once, at startup, and types the result. An
 * invalid environment throws one readable error listing every problem.
 */
export function fromSchema<S extends StandardSchemaV1>(
  schema: S,
  env: Record<string, string | undefined> = processEnv(),
): AppSecrets<StandardSchemaV1.InferOutput<S> & Record<string, unknown>> {
  const result = schema["~standard"].validate(env);
  if (result instanceof Promise) throw new Error("fromSchema needs a synchronous schema: secrets are read at startup");
  if (result.issues) {
    const lines = result.issues.map((issue) => {
      const path = (issue.path ?? []).map((part) => (typeof part === "object" ? String(part.key) : String(part))).join(".");
      return `  - ${path || "(root)"}: ${issue.message}`;
    });
    throw new Error(`Invalid environment:\n${lines.join("\n")}`);
  }
  return fromRecord(result.value as StandardSchemaV1.InferOutput<S> & Record<string, unknown>);
}

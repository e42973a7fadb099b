import { ORPCError, ValidationError, createProcedureClient, type AnyProcedure } from "@orpc/server";
import { classifyDatabaseError } from "./db/errors.js";
import { QueryError } from "./db/query-error.js";
import { ValueError } from "./db/values.js";
import { report, type ErrorSource, type OnError } from "./errors.js";
import { clientGone, isClientGone, isConnectionLost, unavailable, UNAVAILABLE_MESSAGES } from "./lifecycle/availability.js";
import { diskFull, isDiskFull } from "./db/disk-full.js";
import { isSchemaMismatch, schemaMismatch } from "./db/schema-mismatch.js";
import { invalidInputMessage } from "./log/describe-error.js";
import type { RequestEvent } from "./event.js";
import type { SchemaModel } from "./schema/model.js";
import type { SchemaVerdict } from "./lifecycle/schema-gate.js";

/**
 * The gate: one place that decides what a caller sees when a procedure fails, for every surface.
 * `/rpc`, `client()`, and `sealed.call()` (REST, MCP, live, plugins) all run procedures through
 * `gateInterceptor`, so a permission, validation or database error has one status everywhere and
 * an unexpected failure is reported once, with its source.
 */

/** Maps a library's own deliberate errors (the auth library's, say) to an `RpcError`; plugins tap it. */
export type ErrorMapper = (error: unknown) => ORPCError<any, any> | undefined;

export interface ErrorRules {
  onError: OnError;
  schema?: SchemaModel;
  map?: ErrorMapper;
  /** True once `close()` began: a failure then is the shutdown, answered 503 and not reported. */
  closed?: () => boolean;
  instrumentation?: { procedure?<T>(name: string, source: ErrorSource, run: () => Promise<T>): Promise<T> }; // observers (kernel/observe)
  /** Judges a query that named a missing table or column (lifecycle/readiness.ts); without it, such a query is a 500. */
  schemaVerdict?: () => Promise<SchemaVerdict>;
}

/**
 * Turns anything a procedure throws into the error the caller should see: `RpcError`s pass through
 * (never reported), database constraint errors become 409/400, invalid input names the field, a lost
 * database connection is a reported 503, and everything else is a bare 500 reported to `onError`
 * (a query against a missing table included: `judgeSchemaError` first tells a starting app or a
 * newer database, which are 503s, from that coding error).
 */
export function toRpcError(error: unknown, rules: ErrorRules, source: ErrorSource, event?: RequestEvent): ORPCError<any, any> {
  const mapped = mapError(error, rules, source, event);
  // Kept for the request's log line (its message, for a 4xx the caller's mistake in words).
  if (event) event.error = mapped;
  return mapped;
}

function mapError(error: unknown, rules: ErrorRules, source: ErrorSource, event: RequestEvent | undefined): ORPCError<any, any> {
  const { onError, schema } = rules;
  if (error instanceof ORPCError) {
    if (error.cause instanceof ValidationError) return validationError(error, error.cause, onError, source, event);
    return error;
  }
  const mapped = rules.map?.(error);
  if (mapped) return mapped;
  const database = classifyDatabaseError(error, schema);
  if (database) return new ORPCError(database.code, { status: database.status, message: database.message, data: database.data });
  if (isInputError(error)) return new ORPCError("BAD_REQUEST", { message: error.message, data: inputErrorData(error) });
  if (rules.closed?.()) return unavailable(UNAVAILABLE_MESSAGES.closed);
  if (isClientGone(error, event?.request)) return clientGone();
  report(onError, error, source, event);
  // A database that went away is the app's state, not a bug in the request: 503, and still reported.
  if (isConnectionLost(error)) return unavailable(UNAVAILABLE_MESSAGES.lost);
  if (isDiskFull(error)) return diskFull();
  return new ORPCError("INTERNAL_SERVER_ERROR", { message: "Internal server error" });
}

/**
 * A query that named a missing table or column, judged by the schema's state: the app's migrations
 * pending or running is a 503 "starting" (not reported); a database a newer version migrated (a
 * rolling upgrade) a reported 503 naming the schema; otherwise a coding error, the reported 500.
 * Undefined for any other error (`toRpcError` maps it at once).
 */
export function judgeSchemaError(error: unknown, rules: ErrorRules, source: ErrorSource, event?: RequestEvent): Promise<ORPCError<any, any>> | undefined {
  if (!rules.schemaVerdict || !isSchemaMismatch(error) || rules.closed?.()) return undefined;
  return rules.schemaVerdict().then((verdict) => {
    if (verdict === "behind") return toRpcError(unavailable(UNAVAILABLE_MESSAGES.starting), rules, source, event);
    if (verdict === "current") return toRpcError(error, rules, source, event);
    report(rules.onError, error, source, event);
    return toRpcError(schemaMismatch(), rules, source, event);
  });
}

function validationError(error: ORPCError<any, any>, cause: ValidationError, onError: OnError, source: ErrorSource, event: RequestEvent | undefined) {
  // An output that fails its own schema is the server's bug, not the caller's.
  if (error.status >= 500) {
    report(onError, error, source, event);
    return new ORPCError("INTERNAL_SERVER_ERROR", { message: "Internal server error" });
  }
  return new ORPCError("BAD_REQUEST", { message: invalidInputMessage(cause.issues), data: error.data, cause });
}

/** Errors raised by Trellis' own input checks (the query API and the value codec), and no others. */
function isInputError(error: unknown): error is Error & { path?: string } {
  return error instanceof QueryError || error instanceof ValueError;
}

function inputErrorData(error: { path?: string }) {
  return error.path ? { path: error.path } : undefined;
}

/** Set on a request's context once its procedure returned: a later failure is the server's. */
export const RETURNED = Symbol("trellis.procedureReturned");

/** Set on a request's context by the kernel: the request it serves, so failures name it. */
export const REQUEST_EVENT = Symbol("trellis.requestEvent");

/** The request a context serves (undefined for a context built without one). */
export function eventOf(context: object | undefined): RequestEvent | undefined {
  return context ? (context as Record<symbol, RequestEvent | undefined>)[REQUEST_EVENT] : undefined;
}

/**
 * The oRPC client interceptor every surface runs procedures through. A streamed output (an async
 * iterator) is wrapped so an error raised while it iterates is mapped and reported the same way.
 */
export function gateInterceptor(rules: ErrorRules, source: ErrorSource) {
  // A promise chain rather than an async function: one frame less on every call.
  return <T>({ next, context, path }: { next: () => Promise<T>; context?: object; path?: readonly string[] }): Promise<T> =>
    (rules.instrumentation?.procedure && path ? rules.instrumentation.procedure(path.length === 1 ? path[0]! : path.join("."), source, next) : next()).then(
      (output) => {
        if (context) (context as Record<symbol, boolean>)[RETURNED] = true;
        return isAsyncIterator(output) ? (mapIteratorErrors(output, rules, source, eventOf(context)) as T) : output;
      },
      (error) => {
        const judged = judgeSchemaError(error, rules, source, eventOf(context));
        if (judged) return judged.then((mapped) => Promise.reject(mapped));
        throw toRpcError(error, rules, source, eventOf(context));
      },
    );
}

function isAsyncIterator(value: unknown): value is AsyncIterator<unknown> & AsyncIterable<unknown> {
  return typeof value === "object" && value !== null && typeof (value as AsyncIterable<unknown>)[Symbol.asyncIterator] === "function";
}

/** The same iterator, its errors mapped by the gate; `return()` still releases the source. */
function mapIteratorErrors<T>(iterator: AsyncIterator<T> & AsyncIterable<T>, rules: ErrorRules, source: ErrorSource, event: RequestEvent | undefined): AsyncIterableIterator<T> {
  const mapError = (error: unknown): never => {
    throw toRpcError(error, rules, source, event);
  };
  const mapped: AsyncIterableIterator<T> = {
    next: (...args: [] | [unknown]) => iterator.next(...args).catch(mapError),
    return: (value?: unknown) => (iterator.return ? iterator.return(value) : Promise.resolve({ done: true, value })).catch(mapError) as Promise<IteratorResult<T>>,
    throw: (error?: unknown) => (iterator.throw ? iterator.throw(error) : Promise.reject(error)).catch(mapError),
    [Symbol.asyncIterator]: () => mapped,
  };
  return mapped;
}

export interface GateCallOptions<Ctx> {
  context: Ctx;
  source: ErrorSource;
  signal?: AbortSignal;
  lastEventId?: string;
}

/** Runs one procedure with its middleware, permission, validation and the gate's error rules. */
export function callProcedure<Ctx extends object>(
  procedure: AnyProcedure,
  path: readonly string[],
  input: unknown,
  rules: ErrorRules,
  options: GateCallOptions<Ctx>,
): Promise<unknown> {
  const client = createProcedureClient(procedure, {
    context: options.context,
    path: [...path],
    interceptors: [gateInterceptor(rules, options.source)],
  });
  return client(input as never, { signal: options.signal, lastEventId: options.lastEventId });
}

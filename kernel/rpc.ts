import { ORPCError, ValidationError, type AnyRouter } from "@orpc/server";
import { RPCHandler } from "@orpc/server/fetch";
import { classifyDatabaseError } from "./db/errors.js";
import { QueryError } from "./db/query-error.js";
import { ValueError } from "./db/values.js";
import { report, type ErrorSource, type OnError } from "./errors.js";
import { customJsonSerializers } from "./wire.js";
import type { AppRpcContext } from "./context.js";
import type { SchemaModel } from "./schema/model.js";

/**
 * Turns anything a procedure throws into the error the caller should see: `RpcError`s pass through
 * (never reported), database constraint errors become 409/400, invalid input names the field, and
 * everything else is a bare 500 reported to `onError`.
 */
/** Maps a library's own deliberate errors (the auth library's, say) to an `RpcError`; plugins tap it. */
export type ErrorMapper = (error: unknown) => ORPCError<any, any> | undefined;

export interface ErrorRules {
  onError: OnError;
  schema?: SchemaModel;
  map?: ErrorMapper;
}

export function toRpcError(error: unknown, rules: ErrorRules, source: ErrorSource): ORPCError<any, any> {
  const { onError, schema } = rules;
  if (error instanceof ORPCError) {
    if (error.cause instanceof ValidationError) return validationError(error, error.cause, onError, source);
    return error;
  }
  const mapped = rules.map?.(error);
  if (mapped) return mapped;
  const database = classifyDatabaseError(error, schema);
  if (database) return new ORPCError(database.code, { status: database.status, message: database.message, data: database.data });
  if (isInputError(error)) return new ORPCError("BAD_REQUEST", { message: error.message, data: inputErrorData(error) });
  report(onError, error, source);
  return new ORPCError("INTERNAL_SERVER_ERROR", { message: "Internal server error" });
}

function validationError(error: ORPCError<any, any>, cause: ValidationError, onError: OnError, source: ErrorSource) {
  // An output that fails its own schema is the server's bug, not the caller's.
  if (error.status >= 500) {
    report(onError, error, source);
    return new ORPCError("INTERNAL_SERVER_ERROR", { message: "Internal server error" });
  }
  const first = cause.issues[0];
  const path = first?.path?.map((segment) => (typeof segment === "object" ? segment.key : segment)).join(".");
  const detail = first ? `${path ? `${path}: ` : ""}${first.message}` : "invalid input";
  return new ORPCError("BAD_REQUEST", { message: `Invalid input: ${detail}`, data: error.data, cause });
}

/** Errors raised by Trellis' own input checks (the query API and the value codec), and no others. */
function isInputError(error: unknown): error is Error & { path?: string } {
  return error instanceof QueryError || error instanceof ValueError;
}

function inputErrorData(error: { path?: string }) {
  return error.path ? { path: error.path } : undefined;
}

/** Set on a request's context once its procedure returned: a later failure is the server's. */
const RETURNED = Symbol("trellis.procedureReturned");

/** An oRPC client interceptor applying `toRpcError`; shared by `/rpc/**` and `client()`. */
export function errorInterceptor(rules: ErrorRules, source: ErrorSource) {
  // A promise chain rather than an async function: one frame less on every call.
  return <T>({ next, context }: { next: () => Promise<T>; context?: object }): Promise<T> =>
    next().then(
      (output) => {
        if (context) (context as Record<symbol, boolean>)[RETURNED] = true;
        return output;
      },
      (error) => {
        throw toRpcError(error, rules, source);
      },
    );
}

export function createRpcHandler(router: AnyRouter, rules: ErrorRules): RPCHandler<AppRpcContext> {
  return new RPCHandler<AppRpcContext>(router, {
    customJsonSerializers,
    clientInterceptors: [errorInterceptor(rules, "rpc")],
    // Encoding the output happens after the procedure, outside the client interceptors: a failure
    // there (a circular value, a throwing getter) is the server's bug and must be reported. Decoding
    // failures pass here too, before the procedure ran; those are the caller's and are not.
    interceptors: [
      ({ next, context }) =>
        next().catch((error) => {
          if (!(error instanceof ORPCError) && (context as unknown as Record<symbol, boolean>)[RETURNED]) report(rules.onError, error, "rpc");
          throw error;
        }),
    ],
  });
}

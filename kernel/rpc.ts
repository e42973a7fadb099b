import { ORPCError, ValidationError, type AnyRouter } from "@orpc/server";
import { RPCHandler } from "@orpc/server/fetch";
import { classifyDatabaseError } from "./db/errors.js";
import { report, type ErrorSource, type OnError } from "./errors.js";
import { customJsonSerializers } from "./wire.js";
import type { AppRpcContext } from "./context.js";
import type { SchemaModel } from "./schema/model.js";

/**
 * Turns anything a procedure throws into the error the caller should see: `RpcError`s pass through
 * (never reported), database constraint errors become 409/400, invalid input names the field, and
 * everything else is a bare 500 reported to `onError`.
 */
export function toRpcError(error: unknown, onError: OnError, source: ErrorSource, schema?: SchemaModel): ORPCError<any, any> {
  if (error instanceof ORPCError) {
    if (error.cause instanceof ValidationError) return validationError(error, error.cause, onError, source);
    return error;
  }
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

/** Errors raised by Trellis' own input checks: the `where` compiler and the value codec. */
function isInputError(error: unknown): error is Error & { path?: string } {
  if (!(error instanceof Error)) return false;
  return (error as { status?: unknown }).status === 400 || error.name === "WhereError" || error.name === "ValueError";
}

function inputErrorData(error: { path?: string }) {
  return error.path ? { path: error.path } : undefined;
}

/** An oRPC client interceptor applying `toRpcError`; shared by `/rpc/**` and `client()`. */
export function errorInterceptor(onError: OnError, source: ErrorSource, schema?: SchemaModel) {
  return async <T>({ next }: { next: () => Promise<T> }): Promise<T> => {
    try {
      return await next();
    } catch (error) {
      throw toRpcError(error, onError, source, schema);
    }
  };
}

export function createRpcHandler(router: AnyRouter, onError: OnError, schema?: SchemaModel): RPCHandler<AppRpcContext> {
  return new RPCHandler<AppRpcContext>(router, {
    customJsonSerializers,
    clientInterceptors: [errorInterceptor(onError, "rpc", schema)],
  });
}

import type { AnyProcedure } from "@orpc/server";
import type { ProcedureTree } from "./plugin.js";
import type { AppRpcContext } from "./context.js";
import type { RequestEvent } from "./event.js";
import type { OnError } from "./errors.js";
import type { SchemaModel } from "./schema/model.js";

/** The finished app as surfaces (OpenAPI, MCP) see it once every plugin has built. */
export interface SealedApp {
  readonly name: string;
  readonly baseUrl: string | undefined;
  /** The nested oRPC router served at `/rpc/**`. */
  readonly router: ProcedureTree;
  /** Every procedure by dotted name. */
  readonly procedures: ReadonlyMap<string, AnyProcedure>;
  readonly schema: SchemaModel;
  /** Builds the request context (session included) for a request. */
  createContext(event: RequestEvent): Promise<AppRpcContext>;
  /** Reports an unexpected failure to `onError`. */
  readonly onError: OnError;
}

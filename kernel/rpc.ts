import { ORPCError, type AnyRouter } from "@orpc/server";
import { RPCHandler } from "@orpc/server/fetch";
import { report } from "./errors.js";
import { RETURNED, eventOf, gateInterceptor, type ErrorRules } from "./gate.js";
import { customJsonSerializers } from "./wire/custom-json.js";
import type { AppRpcContext } from "./context.js";

/** The `/rpc/**` handler: oRPC's RPC protocol, every procedure run through the gate. */
export function createRpcHandler(router: AnyRouter, rules: ErrorRules): RPCHandler<AppRpcContext> {
  return new RPCHandler<AppRpcContext>(router, {
    customJsonSerializers,
    clientInterceptors: [gateInterceptor(rules, "rpc")],
    // Encoding the output happens after the procedure, outside the client interceptors: a failure
    // there (a circular value, a throwing getter) is the server's bug and must be reported. Decoding
    // failures pass here too, before the procedure ran; those are the caller's and are not.
    interceptors: [
      ({ next, context }) =>
        next().catch((error) => {
          if (!(error instanceof ORPCError) && (context as unknown as Record<symbol, boolean>)[RETURNED]) report(rules.onError, error, "rpc", eventOf(context));
          throw error;
        }),
    ],
  });
}

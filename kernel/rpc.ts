import { StandardRPCJsonSerializer, StandardRPCSerializer } from "@orpc/client/standard";
import { ORPCError, type AnyProcedure, type AnyRouter } from "@orpc/server";
import { FetchHandler, type RPCHandlerOptions } from "@orpc/server/fetch";
import { StrictGetMethodPlugin } from "@orpc/server/plugins";
import { StandardHandler, StandardRPCCodec, StandardRPCMatcher } from "@orpc/server/standard";
import { report } from "./errors.js";
import { RETURNED, eventOf, gateInterceptor, type ErrorRules } from "./gate.js";
import { customJsonSerializers } from "./wire/custom-json.js";
import { markedEncoder } from "./wire/row-encoder.js";
import type { AppRpcContext } from "./context.js";

/** The `/rpc/**` handler: oRPC's RPC protocol, every procedure run through the gate. */
export function createRpcHandler(router: AnyRouter, rules: ErrorRules): FetchHandler<AppRpcContext> {
  const options: RPCHandlerOptions<AppRpcContext> = {
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
    // As oRPC's RPCHandler: GET only for procedures that allow it.
    plugins: [new StrictGetMethodPlugin()],
  };
  // oRPC's RPCHandler, assembled here so the codec can encode resource rows by their compiled encoder.
  const json = new StandardRPCJsonSerializer(options);
  const codec = new RowsCodec(new StandardRPCSerializer(json), json);
  return new FetchHandler(new StandardHandler(router, new StandardRPCMatcher(options), codec, options), options);
}

/** An object whose keys are the envelope's own: `json` (the input) and `meta`; `{}` is no input. */
function isEnvelope(body: unknown): boolean {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return false;
  return "json" in body || Object.keys(body).every((key) => key === "meta");
}

/** oRPC's RPC codec, except that an output marked with a row encoder (wire/row-encoder.ts) is encoded by it. */
class RowsCodec extends StandardRPCCodec {
  constructor(
    serializer: StandardRPCSerializer,
    private readonly json: StandardRPCJsonSerializer,
  ) {
    super(serializer);
  }

  /**
   * A body that is not oRPC's envelope (`{"json": <input>, "meta"?: [...]}`; `{}` is no input) was
   * read as no input and refused as `expected object, received undefined`: it is a 400 that names
   * the envelope, and the REST surface that takes plain JSON.
   */
  override async decode(...[request, params, procedure]: Parameters<StandardRPCCodec["decode"]>) {
    if (request.method !== "GET") {
      const body = await request.body();
      if (body !== undefined && !(body instanceof FormData) && !isEnvelope(body)) {
        throw new ORPCError("BAD_REQUEST", {
          message: 'A /rpc body is oRPC\'s envelope {"json": <input>}: this one has no "json" key. Send {"json": ...} (the typed client does), or send the plain input as JSON to the REST surface under /rest (.openapi()).',
        });
      }
    }
    return super.decode(request, params, procedure);
  }

  override encode(output: unknown, procedure: AnyProcedure) {
    const encode = markedEncoder(output);
    if (!encode) return super.encode(output, procedure);
    const sink = { meta: [], maps: [], blobs: [], generic: this.json };
    const json = encode(output, sink);
    // A Blob somewhere inside (put there by middleware) needs oRPC's multipart answer.
    if (sink.blobs.length) return super.encode(output, procedure);
    return { status: 200, headers: {}, body: { json, meta: sink.meta.length ? sink.meta : undefined } };
  }
}

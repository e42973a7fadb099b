import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import { isJSONRPCErrorResponse, isJSONRPCRequest, isJSONRPCResultResponse, type JSONRPCMessage, type MessageExtraInfo, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { AppRpcContext, RequestEvent } from "../../kernel/index.js";

/** Who sent a JSON-RPC request: the HTTP request it came in, and its caller's context. */
export interface Caller {
  event: RequestEvent;
  context: AppRpcContext;
}

interface InFlight {
  /** The HTTP request's own transport, which answers it. */
  transport: Transport;
  /** The id the client gave the request. */
  id: RequestId;
  caller: Caller;
}

/**
 * The one connection of the app's single MCP server. The SDK's stateless HTTP transport still
 * serves each HTTP request (its header, batch and protocol-version rules); its messages come in
 * here with fresh ids, because two clients may both send id 1 at once, and every answer goes back
 * to the transport that brought the request, under the client's own id. Handlers find their
 * caller by the id the server hands them (`extra.requestId`).
 */
export class RequestRouter implements Transport {
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly #inFlight = new Map<RequestId, InFlight>();
  #next = 0;

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.#inFlight.clear();
    this.onclose?.();
  }

  /** Routes the messages of one HTTP request's transport into the server. */
  attach(transport: Transport, caller: Caller): void {
    transport.onmessage = (message, extra) => {
      if (!isJSONRPCRequest(message)) {
        // A cancellation names a request by the id its client gave it, which says nothing here: the
        // server knows requests by their fresh ids, and another client's request may hold that one.
        // A stateless server cannot tell whose request is meant, so it cancels none (as the SDK's
        // stateless servers, one per HTTP request, never can).
        if ("method" in message && message.method === "notifications/cancelled") return;
        return this.onmessage?.(message, extra);
      }
      const id = ++this.#next;
      this.#inFlight.set(id, { transport, id: message.id, caller });
      this.onmessage?.({ ...message, id }, extra);
    };
  }

  caller(id: RequestId): Caller {
    const found = this.#inFlight.get(id);
    if (!found) throw new Error(`No MCP request in flight with id ${String(id)}`);
    return found.caller;
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
      const found = message.id === undefined ? undefined : this.#inFlight.get(message.id);
      if (!found) return;
      this.#inFlight.delete(message.id!);
      return found.transport.send({ ...message, id: found.id });
    }
    // A notification about a request (progress, logging) goes with that request's answer.
    const related = options?.relatedRequestId === undefined ? undefined : this.#inFlight.get(options.relatedRequestId);
    if (related) return related.transport.send(message, { ...options, relatedRequestId: related.id });
  }
}

import type { RequestEvent } from "../../kernel/index.js";

const BATCH_REFUSED = "Invalid Request: JSON-RPC batches are not accepted; send one message per request";

/**
 * The request's body as text, or a refusal. A JSON-RPC batch (a JSON array body) would run every
 * call it carries for one count of the rate limit, which counts HTTP requests. MCP dropped batching
 * in protocol revision 2025-06-18 and its clients send one message per request, so a batch is
 * refused with 400 before the MCP server reads it, in the transport's own error shape. Anything else
 * goes on as text (`undefined` without a body): malformed JSON is the transport's to answer.
 */
export async function readMessage(event: RequestEvent): Promise<Response | string | undefined> {
  if (!event.request.body) return undefined;
  let text: string;
  try {
    text = await event.request.text();
  } catch {
    // A client that hung up mid-body: nothing to run, and nothing for `onError` (as the transport does).
    return refusal(-32700, "Parse error: the request body could not be read");
  }
  // A JSON document is an array exactly when its first non-blank character is `[`.
  if (/^\s*\[/.test(text)) return refusal(-32600, BATCH_REFUSED);
  return text;
}

function refusal(code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), { status: 400, headers: { "content-type": "application/json" } });
}

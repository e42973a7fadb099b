import { RpcError, errorResponse, toPlainJson, type RouteDefinition, type SealedApp } from "../../kernel/index.js";
import { MultipartUpload, openMultipart, type MultipartLimits } from "./multipart.js";
import { StreamedFile } from "./streamed-file.js";

export const REST_UPLOAD_PATH = "/rest/file/upload";

/**
 * `POST /rest/file/upload`: plain `multipart/form-data`, a `file` field and an optional `attach`
 * field holding JSON (`{"table":"post","entityId":1}`), sent before the file. The file streams
 * into storage as on `/rpc`, and `file.upload` runs through the gate: the same limits, `accept`,
 * statuses and rows, the record as plain JSON.
 */
export function restUploadRoute(limits: MultipartLimits, bodyLimit: number, sealed: () => SealedApp): RouteDefinition {
  return {
    method: "POST",
    path: REST_UPLOAD_PATH,
    bodyLimit,
    handler: async (event, context) => {
      let upload: MultipartUpload | undefined;
      try {
        const type = event.headers.get("content-type") ?? "";
        if (!type.toLowerCase().startsWith("multipart/form-data")) {
          throw new RpcError("UNSUPPORTED_MEDIA_TYPE", { status: 415, message: `Send multipart/form-data with a "file" field (got ${type ? `"${type}"` : "no content type"})` });
        }
        upload = await openMultipart(event.request, limits);
        const { fields, file } = await upload.head;
        if (file && file.field !== "file") throw new RpcError("BAD_REQUEST", { message: `Send the file in the "file" field (got "${file.field}")`, data: { path: "file" } });
        const input: Record<string, unknown> = { file: file && new StreamedFile(file) };
        const attach = fields.get("attach");
        if (attach !== undefined) input.attach = json(attach);
        const output = await sealed().call("file.upload", input, { event, context, source: "rest" });
        return new Response(toPlainJson(output), { headers: { "content-type": "application/json" } });
      } catch (error) {
        return errorResponse(sealed().toError(error, "rest", event), false);
      } finally {
        upload?.dispose();
      }
    },
  };
}

function json(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new RpcError("BAD_REQUEST", { message: `attach must be JSON, such as {"table":"post","entityId":1}`, data: { path: "attach" } });
  }
}

import { RpcError, type HttpMiddleware, type RequestEvent } from "../../kernel/index.js";
import { MultipartUpload, openMultipart, type MultipartLimits } from "./multipart.js";
import { StreamedFile } from "./streamed-file.js";

/**
 * The request `/rpc/file/upload` hands to the RPC handler: `formData()` answers the envelope's
 * fields and a `StreamedFile` as soon as the file part starts (once the envelope arrived: a file
 * sent before it is held until it does), where the platform's would read and copy the whole body first. Everything else (permissions, validation, errors) runs unchanged.
 */
class UploadRequest extends Request {
  constructor(
    request: Request,
    readonly upload: MultipartUpload,
  ) {
    super(request.url, { method: request.method, headers: request.headers, signal: request.signal });
  }

  override async formData(): Promise<FormData> {
    const { fields, file } = await this.upload.head;
    checkEnvelope(fields.get(ENVELOPE), file?.field);
    const form = new UploadForm();
    for (const [name, value] of fields) form.append(name, value);
    if (file) form.attach(file.field, new StreamedFile(file));
    return form;
  }
}

/**
 * The form handed to the RPC decoder, which reads it with `get()`: the file part is answered as the
 * `StreamedFile` itself. (Node and Deno keep a `File` appended to a `FormData` as is; Bun copies it
 * into a plain `Blob`, which would leave the upload empty.)
 */
class UploadForm extends FormData {
  #file: { field: string; value: StreamedFile } | undefined;

  attach(field: string, value: StreamedFile): void {
    this.#file = { field, value };
    this.append(field, value);
  }

  override get(name: string): FormDataEntryValue | null {
    return this.#file?.field === name ? this.#file.value : super.get(name);
  }
}

/** The RPC protocol's part holding the input (`{ json, meta?, maps }`); each file part is named by its index in `maps`. */
const ENVELOPE = "data";

/**
 * What oRPC's decoder would only call a "Malformed request", said: the envelope part missing or not
 * JSON, or a file part whose name the envelope does not map.
 */
function checkEnvelope(envelope: string | undefined, fileField: string | undefined): void {
  const bad = (message: string) => new RpcError("BAD_REQUEST", { message });
  const shape = `an RPC upload sends its input as a "${ENVELOPE}" part holding {"json":...,"maps":[["file"]]} and the file in a part named "0"`;
  if (envelope === undefined) throw bad(`The upload has no "${ENVELOPE}" part: ${shape}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(envelope);
  } catch {
    throw bad(`The "${ENVELOPE}" part is not JSON: ${shape}`);
  }
  const maps = (parsed as { maps?: unknown } | null)?.maps;
  if (typeof parsed !== "object" || parsed === null || !Array.isArray(maps)) throw bad(`The "${ENVELOPE}" part has no "maps" list: ${shape}`);
  if (fileField !== undefined && !(/^\d+$/.test(fileField) && Number(fileField) < maps.length)) {
    throw bad(`The file part is named "${fileField}", which the "${ENVELOPE}" part's maps do not name: ${shape}`);
  }
}

/** True for a multipart POST to `paths` (one or several): the requests an upload route reads as a stream. */
export function isMultipartPost(event: RequestEvent, paths: string | readonly string[]): boolean {
  return event.method === "POST" && (typeof paths === "string" ? event.path === paths : paths.includes(event.path)) && (event.headers.get("content-type") ?? "").toLowerCase().startsWith("multipart/form-data");
}

/**
 * Swaps a multipart `POST` to one of `paths` (the RPC uploads) for an `UploadRequest` before the RPC handler
 * reads it, and stops reading the body once the response is decided (a 401 never reads the file).
 */
export function streamingUploads(paths: readonly string[], limits: MultipartLimits): HttpMiddleware {
  const middleware: HttpMiddleware = async (event, next) => {
    if (!isMultipartPost(event, paths)) return next();
    // Parts in any order: a file sent before the envelope is held until the envelope arrives.
    const upload = await openMultipart(event.request, limits, [ENVELOPE]);
    event.request = new UploadRequest(event.request, upload);
    return next().finally(() => upload.dispose());
  };
  middleware.displayName = "files:stream-uploads";
  return middleware;
}

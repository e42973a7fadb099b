import type { HttpMiddleware, RequestEvent } from "../../kernel/index.js";
import { MultipartUpload, openMultipart, type MultipartLimits } from "./multipart.js";
import { StreamedFile } from "./streamed-file.js";

/**
 * The request `/rpc/file/upload` hands to the RPC handler: `formData()` answers the envelope's
 * fields and a `StreamedFile` as soon as the file part starts, where the platform's would read and
 * copy the whole body first. Everything else (permissions, validation, errors) runs unchanged.
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
    const form = new FormData();
    for (const [name, value] of fields) form.append(name, value);
    // Appended without a file name, a `File` is kept as is (not copied into a new one).
    if (file) form.append(file.field, new StreamedFile(file));
    return form;
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
    const upload = await openMultipart(event.request, limits);
    event.request = new UploadRequest(event.request, upload);
    return next().finally(() => upload.dispose());
  };
  middleware.displayName = "files:stream-uploads";
  return middleware;
}

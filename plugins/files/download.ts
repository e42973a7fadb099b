import { createHash } from "node:crypto";
import { RpcError, TrellisError, errorResponse, readStream, type AppStorage, type ErrorSource, type RequestEvent, type RouteDefinition } from "../../kernel/index.js";
import { fileNotFound, type FileAccess } from "./access.js";
import { FILES_BYTES_MISSING } from "./errors.js";
import { contentDisposition } from "./file-name.js";
import { rendersInline } from "./media-type.js";
import type { FilePermission } from "./options.js";
import { matchesEtag, requestedRange } from "./ranges.js";
import type { FileRows, StoredFile } from "./records.js";
import { FILES_SIZE_NEEDS_SIGNATURE } from "./errors.js";
import { parseFileRequest } from "./file-request.js";
import { checkSignature } from "./signed-urls.js";
import type { UrlSigner } from "./signing.js";
import type { FileImages } from "./variants.js";

/** What the route needs beyond the original's bytes: variants (when `images` is set) and the signer. */
export interface MediaDeps {
  images: FileImages | undefined;
  signer: UrlSigner;
}

/** A stored file is never rewritten (a new upload gets a new key), so its key names its content. */
function etagOf(key: string): string {
  return `"${createHash("sha256").update(key).digest("base64url").slice(0, 27)}"`;
}

/**
 * `GET <path>`: the file, as `serveFile` answers it.
 * With `owner`, everyone but the owner (and `roles`) gets 404, signed in or not, exactly as for an
 * id that does not exist.
 */
export function downloadRoute(path: string, rule: FilePermission<any>, deps: ServeDeps & { access: FileAccess; media: MediaDeps }): RouteDefinition {
  const { rows, access, media } = deps;
  return {
    method: "GET",
    path,
    handler: async (event, context) => {
      const id = event.params.id ?? "";
      const request = parseFileRequest(event.url, media.images?.images);
      let found: StoredFile | undefined;
      let cacheControl: string;
      if (request.signature) {
        // The signature is the permission: no session is read, and the URL may sit in a shared cache until it expires.
        const remaining = checkSignature(media.signer, id, request);
        found = await rows.find(id, undefined);
        if (!found) throw fileNotFound();
        cacheControl = `public, max-age=${remaining}`;
      } else {
        if (request.adHoc) throw new RpcError(FILES_SIZE_NEEDS_SIGNATURE, { status: 403, message: "Sizes other than the configured variants need a signed URL (file.sign or context.files.sign)" });
        if (rule !== "owner") access.gate(rule, context);
        found = await rows.find(id, await access.scope(rule, context));
        await access.check(rule, context, found?.record);
        if (!found) throw fileNotFound();
        // Public bytes may sit in shared caches for an hour; others only in the caller's, revalidated
        // each time. An organization's file is never public: who gets it depends on the session.
        cacheControl = rule === "public" && !found.record.organizationId ? "public, max-age=3600" : "private, no-cache";
      }
      if (request.resize) return media.images!.respond(event, found, request.resize, request.download, cacheControl);
      return serveFile(event, found, deps, cacheControl);
    },
  };
}

/** What serving a file reads: the store, the rows, and where a row without bytes is reported. */
export interface ServeDeps {
  storage: AppStorage;
  rows: FileRows;
  report: (error: unknown, source: ErrorSource, event?: RequestEvent) => void;
}

/**
 * A stored file as a response: its bytes streamed from the store, inline only for types safe to
 * render (else as an attachment, and always with `?download`), never sniffed, sandboxed; with
 * `ETag`, conditional requests and single ranges.
 */
export async function serveFile(event: RequestEvent, found: StoredFile, { storage, rows, report }: ServeDeps, cacheControl: string): Promise<Response> {
  const etag = etagOf(found.key);
  const headers = fileHeaders(found, etag, cacheControl, event.url.searchParams.has("download"));
  if (matchesEtag(event.headers.get("if-none-match"), etag)) return new Response(null, { status: 304, headers });
  const size = found.record.size;
  const range = requestedRange(event.headers.get("range"), event.headers.get("if-range"), etag, size);
  if (range === "unsatisfiable") {
    const response = errorResponse(new RpcError("RANGE_NOT_SATISFIABLE", { status: 416, message: `Range not satisfiable for ${size} bytes` }), false);
    response.headers.set("content-range", `bytes */${size}`);
    return response;
  }
  if (range) {
    headers.set("content-range", `bytes ${range.start}-${range.end}/${size}`);
    headers.set("content-length", String(range.end - range.start + 1));
  } else headers.set("content-length", String(size));
  const status = range ? 206 : 200;
  if (event.method === "HEAD") return new Response(null, { status, headers });
  // Streamed from the store as the client reads: a file is never held whole in memory.
  const body = await readStream(storage, found.key, range);
  if (!body) {
    // `file.delete` removes the bytes after its commit: a row read just before it is gone now, a 404
    // like any deleted file's. Bytes missing under a row that is still there (a memory store that
    // restarted, a bucket emptied by hand) are gone for good: 410, and reported so the operator sees it.
    if (!(await rows.find(found.record.id, undefined))) throw fileNotFound();
    report(new TrellisError(FILES_BYTES_MISSING, `File ${found.record.id} has a row but no bytes in storage (key ${found.key})`), "route", event);
    throw new RpcError(FILES_BYTES_MISSING, { status: 410, message: `The file ${found.record.id} is listed but its contents are no longer stored; upload it again` });
  }
  return new Response(body, { status, headers });
}

function fileHeaders({ record }: StoredFile, etag: string, cacheControl: string, download: boolean): Headers {
  const attachment = download || !rendersInline(record.type);
  return new Headers({
    "content-type": record.type,
    "content-disposition": contentDisposition(attachment ? "attachment" : "inline", record.name),
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'none'; sandbox",
    etag,
    "accept-ranges": "bytes",
    "cache-control": cacheControl,
  });
}

import { schema } from "../../kernel/schema/index.js";
import { memoryStorage } from "../../kernel/storage/index.js";
import type { AppStorage, Logger } from "../../kernel/index.js";
import { App } from "../../presets/trellis.js";
import type { FilesConfig } from "../../plugins/files/index.js";
import { ORIGIN } from "../support/auth.js";

export const SECRET = "a-test-secret-that-is-long-enough-0123456789";

export const v1 = schema("1")
  .auth()
  .table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text(), authorId: t.text().nullable() }))
  .table("tag", (t) => ({ id: t.text().primaryKey(), label: t.text() }))
  .files({ attachTo: ["post", "tag"] })
  .build();

/** A store that records what it holds, so tests can see bytes appear and go. */
export function trackedStorage(): AppStorage & { keys(): string[]; failNextSet?: boolean } {
  const inner = memoryStorage();
  const keys = new Set<string>();
  const storage = {
    failNextSet: false,
    keys: () => [...keys],
    get: (key: string) => inner.get(key),
    async set(key: string, bytes: Uint8Array) {
      if (storage.failNextSet) {
        storage.failNextSet = false;
        throw new Error("storage is down");
      }
      await inner.set(key, bytes);
      keys.add(key);
    },
    async delete(key: string) {
      await inner.delete(key);
      keys.delete(key);
    },
  };
  return storage;
}

export function filesApp(db: { dialect: any; kind: "postgres" | "sqlite" }, options: { storage?: AppStorage; files?: FilesConfig<any>; onError?: (error: unknown) => void; logger?: Logger } = {}) {
  return new App({ baseUrl: ORIGIN, db, storage: options.storage ?? trackedStorage(), onError: options.onError ?? (() => {}), ...(options.logger ? { logger: options.logger } : {}) })
    .schema(v1)
    .auth({ secret: SECRET, emailAndPassword: { enabled: true } })
    .resource("post", {
      ownerColumn: "authorId",
      permissions: { list: "public", get: "public", create: "authenticated", update: "owner", delete: "owner" },
    })
    .files({ maxBytes: 1024 * 1024, ...options.files });
}

/** The multipart body the RPC wire format uses for a file: what `curl -F data=... -F 0=@file` sends. */
export function uploadForm(file: Blob, name: string, input: Record<string, unknown> = {}): FormData {
  const form = new FormData();
  // The file field must exist in `json` (any placeholder); `maps` says which form part replaces it.
  form.set("data", JSON.stringify({ json: { ...input, file: {} }, maps: [["file"]] }));
  form.set("0", file, name);
  return form;
}

type Handler = { handle(request: Request): Promise<Response> };

/** `POST /rpc/file/upload` with a multipart body; the RPC envelope unwrapped. */
export async function upload(app: Handler, form: FormData, headers: HeadersInit = {}): Promise<{ status: number; body: any }> {
  const response = await app.handle(new Request(`${ORIGIN}/rpc/file/upload`, { method: "POST", body: form, headers }));
  const parsed = await response.json();
  return { status: response.status, body: parsed.json ?? parsed };
}

export function bytes(length: number, seed = 1): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(length);
  let x = seed;
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

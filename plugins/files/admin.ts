import { z } from "zod";
import { primaryKeyOf, type AppDatabase, type AppStorage, type AppRpcContext, type ProcedureBase, type RouteDefinition, type SchemaModel } from "../../kernel/index.js";
import { fileNotFound } from "./access.js";
import type { Attachments } from "./attachments.js";
import { serveFile } from "./download.js";
import type { FileRecord } from "./options.js";
import { ENVELOPE_BYTES } from "./procedures.js";
import type { FileRows } from "./records.js";
import { admittedType, storeUpload, type UploadStore } from "./store-upload.js";
import { removeBytes } from "./remove-bytes.js";
import { parseFileRequest } from "./file-request.js";
import type { FilesService } from "./signed-urls.js";
import type { FileImages } from "./variants.js";

/** A row that points at a file: through an attach pivot (`via` is `post_file`) or a column of its own (`via` is `profile.avatarId`). */
export interface FileLink {
  table: string;
  id: string | number;
  via: string;
  /** The attachment's role, for a pivot; null otherwise. */
  role: string | null;
}

/** A file as the dashboard lists it: its record, who uploaded it, and what points at it. */
export interface AdminFile extends FileRecord {
  owner: { id: string; email: string } | null;
  attachedTo: FileLink[];
}

/** One column anywhere in the schema that references `file.id`. */
interface Referrer {
  table: string;
  column: string;
  /** For an attach pivot, the attached table; its `entityId` is that row's key. */
  attached?: string;
  key?: string;
}

const listInput = z.object({
  search: z.string().trim().max(200).optional(),
  take: z.number().int().min(1).max(100).optional(),
  skip: z.number().int().min(0).max(100_000).optional(),
});
const idInput = z.object({ id: z.string().min(1).max(128) });
const uploadInput = z.object({ file: z.file({ message: "expected a file" }) });
const signInput = z.object({
  id: z.string().min(1).max(128),
  expiresIn: z.number().int().min(1).default(3600),
  variant: z.string().max(64).optional(),
  download: z.boolean().optional(),
});

export interface FilesAdminDeps {
  db: AppDatabase<any>;
  schema: SchemaModel;
  rows: FileRows;
  attachments: Attachments;
  uploads: UploadStore;
  /** The store as the download route reads it (its failures reported as a route's). */
  routeStorage: AppStorage;
  owned: boolean;
  /** Variants, when `.files({ images })` is configured: previews in the dashboard use them. */
  images: FileImages | undefined;
  /** Signs URLs for `_admin.files.sign`. */
  signer: FilesService;
}

/**
 * `_admin.files.*`, this plugin's section of the admin API (the service `admin-section:files`, which
 * the admin plugin mounts behind its role check, so a caller without the role gets 401/403 before
 * any input is read): every file whatever the files plugin's own rules, with its owner and the rows
 * that point at it; upload, delete, and the bytes at `<admin path>/files/:id`.
 */
export function filesAdminSection(deps: FilesAdminDeps) {
  const download: RouteDefinition = {
    method: "GET",
    path: "/files/:id",
    handler: async (event) => {
      // Named variants only (`?variant=`): a signature or an ad-hoc size means nothing here.
      const request = parseFileRequest(event.url, deps.images?.images);
      const found = await deps.rows.find(event.params.id ?? "", undefined);
      if (!found) throw fileNotFound();
      if (request.resize && !request.adHoc && deps.images) return deps.images.respond(event, found, request.resize, request.download, "private, no-cache");
      return serveFile(event, found, { storage: deps.routeStorage, rows: deps.rows, report: deps.uploads.report }, "private, no-cache");
    },
  };
  return Object.assign((gated: ProcedureBase<AppRpcContext>) => fileAdminProcedures(gated, deps), { routes: [download] });
}

function fileAdminProcedures(gated: ProcedureBase<AppRpcContext>, deps: FilesAdminDeps) {
  const { db, rows, uploads } = deps;
  const referrers = referrersOf(deps.schema);
  const query = (db.query as Record<string, any>).file;

  /** Owners and links for a page of records: one query per referencing column, not per file. */
  const describe = async (records: FileRecord[]): Promise<AdminFile[]> => {
    const ids = records.map((r) => r.id);
    const links = new Map<string, FileLink[]>(ids.map((id) => [id, []]));
    if (ids.length) {
      for (const ref of referrers) {
        const found = (await db.selectFrom(ref.table).selectAll().where(ref.column, "in", ids).execute()) as Record<string, unknown>[];
        for (const row of found) {
          const link: FileLink = ref.attached
            ? { table: ref.attached, id: row.entityId as string | number, via: ref.table, role: (row.role as string | null) ?? null }
            : { table: ref.table, id: row[ref.key!] as string | number, via: `${ref.table}.${ref.column}`, role: null };
          links.get(String(row[ref.column]))?.push(link);
        }
      }
    }
    const userIds = [...new Set(records.map((r) => r.userId).filter((id): id is string => typeof id === "string"))];
    const users = deps.owned && userIds.length ? ((await db.selectFrom("user").select(["id", "email"]).where("id", "in", userIds).execute()) as { id: string; email: string }[]) : [];
    const emails = new Map(users.map((u) => [u.id, u.email]));
    return records.map((r) => ({ ...r, owner: typeof r.userId === "string" && emails.has(r.userId) ? { id: r.userId, email: emails.get(r.userId)! } : null, attachedTo: links.get(r.id)! }));
  };

  const list = gated.input(listInput.default({})).handler(async ({ input }): Promise<{ data: AdminFile[]; count: number }> => {
    const search = input.search || undefined;
    const where = search ? { OR: [{ name: { contains: search } }, { type: { startsWith: search } }, { id: search }] } : undefined;
    const found: Record<string, unknown>[] = await query.findMany({ where, orderBy: [{ createdAt: "desc" }, { id: "asc" }], take: input.take ?? 25, skip: input.skip ?? 0 });
    const count: number = await query.count({ where });
    return { data: await describe(found.map((row) => rows.fromDecoded(row).record)), count };
  });

  const get = gated.input(idInput).handler(async ({ input }): Promise<AdminFile> => {
    const found = await rows.find(input.id, undefined);
    if (!found) throw fileNotFound();
    return (await describe([found.record]))[0]!;
  });

  /** Stored as any upload is (the files plugin's `maxBytes` and `accept` apply), owned by the admin. */
  const upload = gated
    .meta({ bodyLimit: uploads.maxBytes + ENVELOPE_BYTES })
    .input(uploadInput)
    .handler(async ({ input, context }): Promise<AdminFile> => {
      const type = admittedType(input.file, uploads);
      const record = await storeUpload(uploads, input.file, type, deps.owned ? { userId: context.user?.id ?? null } : {});
      return (await describe([record]))[0]!;
    });

  /**
   * As `file.delete`: the row and its attachments in one transaction, then the bytes after the
   * commit, so the transaction is never held open across a call to the store. A store that refuses
   * the delete is reported to `onError` and leaves an unreferenced blob, never a row without bytes.
   */
  const remove = gated.input(idInput).handler(async ({ input }): Promise<FileRecord> => {
    const removed = await db.transact(async (trx) => {
      const found = await rows.find(input.id, undefined, trx);
      if (!found) throw fileNotFound();
      await deps.attachments.detachAll(trx, found.record.id);
      return rows.remove(trx, found.record.id);
    });
    if (!removed) throw fileNotFound();
    await removeBytes(uploads.storage, removed.key, uploads.derivedKeys, uploads.report);
    return removed.record;
  });

  /** A signed URL for any file (admins reach every file), for the dashboard's "Copy signed URL". */
  const sign = gated.input(signInput).handler(async ({ input }): Promise<{ url: string; expiresAt: Date }> => {
    const found = await rows.find(input.id, undefined);
    if (!found) throw fileNotFound();
    const url = deps.signer.sign(found.record.id, { expiresIn: input.expiresIn, variant: input.variant, download: input.download });
    return { url, expiresAt: new Date(Number(new URL(url, "http://localhost").searchParams.get("expires")) * 1000) };
  });

  return { list, get, upload, delete: remove, sign };
}

/** Every column of the schema that references `file.id`, the attach pivots' `fileId` among them. */
function referrersOf(schema: SchemaModel): Referrer[] {
  const pivots = new Map((schema.files?.attachTo ?? []).map((table) => [`${table}_file`, table]));
  const out: Referrer[] = [];
  for (const table of Object.values(schema.tables)) {
    for (const [column, model] of Object.entries(table.columns)) {
      if (model.references?.table !== "file" || model.references.column !== "id") continue;
      const attached = column === "fileId" ? pivots.get(table.name) : undefined;
      const key = primaryKeyOf(table);
      if (attached) out.push({ table: table.name, column, attached });
      else if (key) out.push({ table: table.name, column, key });
    }
  }
  return out;
}

/** What `_admin.files` holds, for a typed client: `createClient<InferRouter<typeof app> & { _admin: { files: AdminFilesRouter } }>`. */
export type AdminFilesRouter = ReturnType<typeof fileAdminProcedures>;

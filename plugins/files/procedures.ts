import { z } from "zod";
import { RpcError, accessMeta, whereColumns, type AppDatabase, type AppStorage, type ErrorSource, type ProcedureBase } from "../../kernel/index.js";
import { fileNotFound, type FileAccess } from "./access.js";
import type { Attachment, Attachments } from "./attachments.js";
import type { FileAction, FilePermission, FileRecord, ResolvedFilesConfig } from "./options.js";
import { scopeWhere, type FileRows } from "./records.js";
import type { signProcedure } from "./sign-procedure.js";
import { admittedType, storeUpload, type UploadStore } from "./store-upload.js";

/** Room for the RPC envelope around the file in a multipart body (field names, JSON, boundaries). */
export const ENVELOPE_BYTES = 64 * 1024;
const LIST_LIMITS = { default: 50, max: 100, maxSkip: 10_000 };
const noNul = (value: string) => !value.includes("\u0000");

const target = z.object({ table: z.string().max(128), entityId: z.union([z.string().max(1024), z.number()]) });
const placement = {
  role: z.string().max(128).refine(noNul, "must not contain NUL").nullable().optional(),
  position: z.number().int().min(0).max(2_147_483_647).optional(),
};
const fileId = z.string().max(128);

const uploadInput = z.object({ file: z.file({ message: "expected a file" }), attach: target.extend(placement).optional() });
const listInput = z
  .object({
    where: z.record(z.string(), z.unknown()).optional(),
    attachedTo: target.optional(),
    take: z.number().int().min(1).optional(),
    skip: z.number().int().min(0).optional(),
  })
  .optional();
const idInput = z.object({ id: fileId });
const attachInput = target.extend({ fileId, ...placement });
const detachInput = target.extend({ fileId });

export interface FileProcedureDeps {
  config: ResolvedFilesConfig;
  storage: AppStorage;
  db: AppDatabase<any>;
  rows: FileRows;
  access: FileAccess;
  attachments: Attachments;
  base: ProcedureBase<any>;
  report(error: unknown, source: ErrorSource): void;
  /** Keys stored beside a file's own (its cached variants), removed with it. */
  derivedKeys?(key: string): string[];
  /** Columns computed at upload from the stored bytes (an image's placeholder). */
  describe?(key: string, type: string): Promise<Record<string, unknown>>;
}

/** `file.upload`, `file.list`, `file.get`, `file.delete`, `file.attach`, `file.detach`. */
export function fileProcedures(deps: FileProcedureDeps) {
  const { config, storage, db, rows, access, attachments, base } = deps;
  const uploads: UploadStore = { storage, db, rows, maxBytes: config.maxBytes, accept: config.accept, report: deps.report, ...(deps.describe ? { describe: deps.describe } : {}) };
  const rules = config.permissions;
  // Attaching changes what a file belongs to: only its owner (or `roles`) may, whatever `get` allows.
  const attachRule: FilePermission<any> = access.owned ? "owner" : rules.get;
  /** The session part of a rule runs before input validation: 401/403 before 400. */
  const gated = (rule: FilePermission<any>) =>
    (rule === "public" || typeof rule === "function"
      ? base
      : base.use(({ context, next }) => {
          access.gate(rule, context);
          return next();
        })
    ).meta(accessMeta(rule, access.roles));
  const scope = (action: FileAction, context: Parameters<FileAccess["scope"]>[1]) => access.scope(rules[action], context);

  const upload = gated(rules.upload)
    // `rest.multipart`: the files plugin serves `POST /rest/file/upload` itself; the OpenAPI document lists it.
    .meta({ bodyLimit: config.maxBytes + ENVELOPE_BYTES, rest: { multipart: true } })
    .input(uploadInput)
    .handler(async ({ input, context }): Promise<FileRecord> => {
      const { file, attach } = input;
      const type = admittedType(file, config);
      await access.check(rules.upload, context);
      const entity = attach && attachments.entity(attach.table, attach.entityId);
      if (attach && entity) await attachments.authorize("update", attach.table, entity.id, context);
      // A file uploaded in an organization belongs to it (with `.files({ organizations: true })`).
      const organization = await access.organization(context);
      const owner = { ...(access.owned && { userId: context.user?.id ?? null }), ...(organization !== undefined && { organizationId: organization }) };
      const link = attach && entity ? (trx: AppDatabase<any>, id: string) => attachments.attach(trx, id, attach.table, entity.id, attach.role ?? null, attach.position ?? 0) : undefined;
      return storeUpload(uploads, file, type, owner, link);
    });

  const list = gated(rules.list)
    .input(listInput)
    .handler(async ({ input = {}, context }): Promise<FileRecord[]> => {
      const take = input.take ?? LIST_LIMITS.default;
      const skip = input.skip ?? 0;
      if (take > LIST_LIMITS.max) throw new RpcError("BAD_REQUEST", { message: `take must be at most ${LIST_LIMITS.max}`, data: { path: "take" } });
      if (skip > LIST_LIMITS.maxSkip) throw new RpcError("BAD_REQUEST", { message: `skip must be at most ${LIST_LIMITS.maxSkip}`, data: { path: "skip" } });
      refuseKeyColumn(input.where);
      const entity = input.attachedTo && attachments.entity(input.attachedTo.table, input.attachedTo.entityId);
      await access.check(rules.list, context);
      // A caller lists the files they could get: with `owner`, their own unless they hold a role;
      // with organizations, those of their active organization and those uploaded outside any.
      const own = scopeWhere(await access.scope(rules.list === "owner" ? "owner" : rules.get, context));
      // The scope is the query's trusted scope, ANDed in SQL: the caller's where keeps its paths.
      const scoped = (extra?: Record<string, unknown>) => {
        const conditions = [own, extra].filter((condition) => condition !== undefined);
        return { ...NO_RELATIONS, ...(conditions.length > 0 && { where: conditions.length === 1 ? conditions[0] : { AND: conditions } }) };
      };
      const query = (db.query as Record<string, any>).file;
      if (!input.attachedTo || !entity) {
        const found: Record<string, unknown>[] = await query.findMany({ where: input.where, orderBy: [{ createdAt: "desc" }], take, skip, scope: scoped() });
        return found.map((row) => rows.fromDecoded(row).record);
      }
      await attachments.authorize("get", input.attachedTo.table, entity.id, context);
      const attached = await attachments.of(input.attachedTo.table, entity.id);
      if (attached.length === 0) return [];
      const inIds = { id: { in: [...new Set(attached.map((entry) => entry.fileId))] } };
      const found: Record<string, unknown>[] = await query.findMany({ where: input.where, scope: scoped(inIds) });
      const byId = new Map(found.map((row) => [String(row.id), rows.fromDecoded(row).record]));
      return attached
        .filter((entry) => byId.has(entry.fileId))
        .map(({ fileId, role, position }) => ({ ...byId.get(fileId)!, attachment: { role, position } }))
        .slice(skip, skip + take);
    });

  const get = gated(rules.get)
    .input(idInput)
    .handler(async ({ input, context }): Promise<FileRecord> => {
      const found = await rows.find(input.id, await scope("get", context));
      await access.check(rules.get, context, found?.record);
      if (!found) throw fileNotFound();
      return found.record;
    });

  const remove = gated(rules.delete)
    .input(idInput)
    .handler(async ({ input, context }): Promise<FileRecord> => {
      const removed = await db.transact(async (trx) => {
        const found = await rows.find(input.id, await scope("delete", context), trx);
        await access.check(rules.delete, context, found?.record);
        if (!found) throw fileNotFound();
        await attachments.detachAll(trx, found.record.id);
        return rows.remove(trx, found.record.id);
      });
      if (!removed) throw fileNotFound();
      // After the commit: a failure here leaves an unreferenced blob, never a row without bytes.
      for (const key of [removed.key, ...(deps.derivedKeys?.(removed.key) ?? [])]) await storage.delete(key).catch((error) => deps.report(error, "rpc"));
      return removed.record;
    });

  /** The file the caller may attach or detach: theirs (or any, holding a role); 404 otherwise. */
  const ownFile = async (id: string, context: Parameters<FileAccess["scope"]>[1]) => {
    const found = await rows.find(id, await access.scope(attachRule, context));
    await access.check(attachRule, context, found?.record);
    if (!found) throw fileNotFound();
    return found;
  };

  const attach = gated(attachRule)
    .input(attachInput)
    .handler(async ({ input, context }): Promise<Attachment> => {
      const entity = attachments.entity(input.table, input.entityId);
      await ownFile(input.fileId, context);
      await attachments.authorize("update", input.table, entity.id, context);
      return db.transact((trx) => attachments.attach(trx, input.fileId, input.table, entity.id, input.role ?? null, input.position ?? 0));
    });

  const detach = gated(attachRule)
    .input(detachInput)
    .handler(async ({ input, context }): Promise<{ fileId: string; table: string; entityId: string | number }> => {
      const entity = attachments.entity(input.table, input.entityId);
      await ownFile(input.fileId, context);
      await attachments.authorize("update", input.table, entity.id, context);
      if ((await attachments.detach(db, input.fileId, input.table, entity.id)) === 0) {
        throw new RpcError("NOT_FOUND", { message: `File ${input.fileId} is not attached to ${input.table} ${entity.id}` });
      }
      return { fileId: input.fileId, table: input.table, entityId: entity.id };
    });

  return { upload, list, get, delete: remove, attach, detach };
}

/** Every `file.*` procedure; `file.sign` is assembled beside the others (sign-procedure.ts). */
export type FileProcedures = ReturnType<typeof fileProcedures> & { sign: ReturnType<typeof signProcedure> };

/** `file.list` filters files by their own columns: a relation filter (into an attached table, say) is 400. */
const NO_RELATIONS = Object.freeze({ related: Object.freeze({}) });

/**
 * The storage key never leaves the server, so it cannot be filtered on either (no guessing by
 * prefix), under any boolean form: the kernel's one walk of `where` finds it wherever it sits.
 */
function refuseKeyColumn(where: unknown): void {
  const found = whereColumns(where).find((column) => column.name === "key");
  if (found) throw new RpcError("BAD_REQUEST", { message: `${found.path}: "key" is not a filterable column of file`, data: { path: found.path } });
}

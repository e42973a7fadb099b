import { TrellisError, definePlugin, installLine, missingPeers, type AppPlugin, type AppStorage, type RouteDefinition, type SealedApp } from "../../kernel/index.js";
import { FileAccess, type FileTenancy } from "./access.js";
import { Attachments } from "./attachments.js";
import { downloadRoute } from "./download.js";
import { FILES_BAD_OPTION, FILES_BAD_PATH, FILES_NO_STORAGE, FILES_NO_TABLE, FILES_OWNER_WITHOUT_COLUMN, FILES_SHARP_MISSING } from "./errors.js";
import { FILE_ACTIONS, resolveConfig, type FilesConfig } from "./options.js";
import { ENVELOPE_BYTES, fileProcedures } from "./procedures.js";
import { restUploadRoute } from "./rest-upload.js";
import { outageAware } from "./storage-outage.js";
import { streamingUploads } from "./upload-request.js";
import { FileRows } from "./records.js";
import { filesAdminSection } from "./admin.js";
import { imagesProblems } from "./image-options.js";
import { placeholderOf } from "./placeholder.js";
import { signProcedure } from "./sign-procedure.js";
import { filesService, type FilesService } from "./signed-urls.js";
import { MIN_KEY_LENGTH, UrlSigner } from "./signing.js";
import { FileImages } from "./variants.js";

export type { FileAction, FilePermission, FilePermissionFn, FileRecord, FilesConfig } from "./options.js";
export type { Attachment } from "./attachments.js";
export type { FileProcedures } from "./procedures.js";
export type { AdminFile, AdminFilesRouter, FileLink } from "./admin.js";
export type { ImagesConfig, VariantSpec, VariantFit } from "./image-options.js";
export type { SigningConfig } from "./signing.js";
export type { FilesService, SignOptions } from "./signed-urls.js";

declare module "../../kernel/index.js" {
  interface AppServices {
    /** Signed download URLs: `context.files.sign(id, { expiresIn, variant?, download? })`. */
    files: FilesService;
  }
}

/** The largest `file.size` the column holds (a 32-bit integer on every family). */
const MAX_FILE_BYTES = 2_147_483_647;

/**
 * Uploads, metadata and downloads over the schema's `.files()` tables: the `file.*` procedures and
 * the download route. Stage `feature`: after auth (its rules read the session) and after resources
 * (attaching asks a table's resource for its update permission), before user plugins.
 */
export function filesPlugin(config: FilesConfig<any> = {}): AppPlugin {
  const resolved = resolveConfig(config);
  let storage: AppStorage | undefined;
  return definePlugin({
    name: "files",
    stage: "feature",
    // `organizations`: built first, so its service is there to scope `.files({ organizations: true })`.
    optionalDependencies: ["auth", "resources", "organizations"],
    provides: ["admin-section:files", "files"],
    validate(ctx) {
      const problems: TrellisError[] = [];
      const fail = (code: string, message: string) => problems.push(new TrellisError(code, message, { plugin: "files", hook: "validate" }));
      storage = resolved.storage ?? ctx.resources.storage;
      if (!storage) fail(FILES_NO_STORAGE, `.files() needs a storage: pass storage to the App constructor or to .files({ storage }) (adapters in trellis/storage)`);
      const table = ctx.schema.tables.file;
      if (!table) fail(FILES_NO_TABLE, `.files() needs the file table: add .files() to the latest schema (version "${ctx.schema.version}")`);
      if (!resolved.path.startsWith("/") || !resolved.path.split("/").includes(":id")) {
        fail(FILES_BAD_PATH, `.files() path must start with "/" and contain the segment ":id" (got "${resolved.path}")`);
      }
      if (!Number.isSafeInteger(resolved.maxBytes) || resolved.maxBytes <= 0) fail(FILES_BAD_OPTION, `.files() maxBytes must be a positive integer (got ${resolved.maxBytes})`);
      // file.size is a 32-bit integer column: a larger file would be stored, then fail its row's insert.
      else if (resolved.maxBytes > MAX_FILE_BYTES) fail(FILES_BAD_OPTION, `.files() maxBytes must be at most ${MAX_FILE_BYTES} (2 GiB - 1, what the 32-bit file.size column holds; got ${resolved.maxBytes})`);
      const owned = table?.columns.userId !== undefined;
      for (const action of FILE_ACTIONS) {
        const rule = resolved.permissions[action];
        if (rule === "owner" && table && !owned) {
          fail(FILES_OWNER_WITHOUT_COLUMN, `.files() ${action} permission "owner" needs file.userId, but the schema has .files({ owner: false })`);
        }
        if (rule !== "public") ctx.requireSession(`files ${action} (permission ${typeof rule === "function" ? "a permission function" : `"${rule}"`})`);
      }
      if (resolved.images) {
        for (const problem of imagesProblems(resolved.images)) fail(FILES_BAD_OPTION, problem);
        if (missingPeers(["sharp"]).length > 0) fail(FILES_SHARP_MISSING, `.files({ images }) needs the optional package "sharp", which is not installed. Install it: ${installLine(["sharp"])}`);
        if (resolved.images.placeholder === true && table && !table.columns.placeholder) {
          fail(FILES_BAD_OPTION, `.files() images.placeholder needs the column file.placeholder: add .files({ placeholder: true }) to the latest schema (version "${ctx.schema.version}")`);
        }
      }
      const key = ctx.resources.secrets?.get(resolved.signing.secret ?? "FILES_SIGNING_KEY");
      if (typeof key === "string" && key !== "" && key.length < MIN_KEY_LENGTH) fail(FILES_BAD_OPTION, `The files signing key (secret ${resolved.signing.secret ?? "FILES_SIGNING_KEY"}) must be at least ${MIN_KEY_LENGTH} characters`);
      const { maxExpiresIn } = resolved.signing;
      if (!Number.isSafeInteger(maxExpiresIn) || maxExpiresIn <= 0) fail(FILES_BAD_OPTION, `.files() signing.maxExpiresIn must be a positive number of seconds (got ${maxExpiresIn})`);
      ctx.reserve("file");
      if (problems.length === 1) throw problems[0];
      if (problems.length > 1) {
        throw new TrellisError(problems[0]!.code, problems.map((problem) => problem.message).join("; "), { plugin: "files", hook: "validate", cause: problems });
      }
    },
    build(ctx) {
      const { db, kind } = ctx.resources;
      const table = ctx.schema.tables.file!;
      const tenancy = table.columns.organizationId !== undefined ? { source: ctx.want("organizations") as FileTenancy | undefined } : undefined;
      const access = new FileAccess(resolved.roles, table.columns.userId !== undefined, tenancy);
      const routeStorage = outageAware(storage!, ctx.report, "route");
      const images = resolved.images ? new FileImages(resolved.images, routeStorage) : undefined;
      const hasVariants = images && Object.keys(images.images.variants).length > 0;
      const rows = new FileRows(db, kind, table, resolved.path, hasVariants ? (record) => (images.accepts(record.type) ? { ...record, variants: images.variantUrls(record.url) } : record) : undefined);
      const signer = UrlSigner.fromSecrets(ctx.resources.secrets, resolved.signing);
      const service = filesService({ signer, images: resolved.images, path: resolved.path, baseUrl: ctx.resources.baseUrl, maxExpiresIn: resolved.signing.maxExpiresIn, secretName: resolved.signing.secret ?? "FILES_SIGNING_KEY" });
      ctx.provide("files", service, { context: true });
      // Placeholders when the schema has the column, unless `images.placeholder` is false.
      const placeholders = images && table.columns.placeholder !== undefined && images.images.placeholder !== false;
      const media = {
        ...(placeholders ? { describe: async (key: string, type: string) => ({ placeholder: await placeholderOf(routeStorage, key, type, images.images, images.limit) }) } : {}),
        ...(images ? { derivedKeys: (key: string) => images.cachedKeys(key) } : {}),
      };
      const registry = ctx.want("resource-registry");
      const attachments = new Attachments(db, kind, ctx.schema, () => registry);
      const outageStorage = outageAware(storage!, ctx.report, "rpc");
      const procedures = fileProcedures({
        config: resolved,
        storage: outageStorage,
        db,
        rows,
        access,
        attachments,
        base: ctx.base,
        report: (error, source) => ctx.report(error, source),
        ...media,
      });
      const sign = signProcedure({ base: ctx.base, rule: resolved.permissions.get, access, rows, service });
      const routes: RouteDefinition[] = [downloadRoute(resolved.path, resolved.permissions.get, { rows, access, storage: routeStorage, report: ctx.report, media: { images, signer } })];
      const limits = { fileBytes: resolved.maxBytes, fieldBytes: ENVELOPE_BYTES };
      // With the REST surface, uploads take plain multipart there too (the document lists the route).
      if (ctx.plugins.includes("openapi")) {
        let sealed: SealedApp | undefined;
        ctx.hooks.sealed.tap((app) => (sealed = app));
        routes.push(restUploadRoute(limits, resolved.maxBytes + ENVELOPE_BYTES, () => sealed!));
      }
      // `_admin.files.*` when the app has `.admin()` (the admin plugin mounts it; unused otherwise).
      const uploads = { storage: outageStorage, db, rows, maxBytes: resolved.maxBytes, accept: resolved.accept, report: ctx.report, ...media };
      ctx.provide("admin-section:files", filesAdminSection({ db, schema: ctx.schema, rows, attachments, uploads, routeStorage, owned: access.owned, images, signer: service }));
      return {
        procedures: { file: { ...procedures, sign } } as never,
        routes,
        middleware: [streamingUploads(ctx.plugins.includes("admin") ? ["/rpc/file/upload", "/rpc/_admin/files/upload"] : ["/rpc/file/upload"], limits)],
      };
    },
  });
}

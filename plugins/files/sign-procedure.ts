import { z } from "zod";
import { accessMeta, type ProcedureBase } from "../../kernel/index.js";
import { fileNotFound, type FileAccess } from "./access.js";
import { VARIANT_FITS } from "./image-options.js";
import type { FilePermission } from "./options.js";
import type { FileRows } from "./records.js";
import type { FilesService } from "./signed-urls.js";

const side = z.number().int().min(1);
const signInput = z.object({
  id: z.string().max(128),
  expiresIn: z.number().int().min(1).default(3600),
  variant: z.union([z.string().max(64), z.object({ width: side.optional(), height: side.optional(), fit: z.enum(VARIANT_FITS as [string, ...string[]]).optional() })]).optional(),
  download: z.boolean().optional(),
});

/**
 * `file.sign { id, expiresIn?, variant?, download? } -> { url, expiresAt }`: a signed URL for a file
 * the caller may `get` (401 signed out, 404 for someone else's file under `owner`, as `file.get`).
 */
export function signProcedure(deps: { base: ProcedureBase<any>; rule: FilePermission<any>; access: FileAccess; rows: FileRows; service: FilesService }) {
  const { base, rule, access, rows, service } = deps;
  const gated = rule === "public" || typeof rule === "function" ? base : base.use(({ context, next }) => (access.gate(rule, context), next()));
  return gated
    .meta(accessMeta(rule, access.roles))
    .input(signInput)
    .handler(async ({ input, context }): Promise<{ url: string; expiresAt: Date }> => {
      const found = await rows.find(input.id, await access.scope(rule, context));
      await access.check(rule, context, found?.record);
      if (!found) throw fileNotFound();
      const url = service.sign(found.record.id, { expiresIn: input.expiresIn, variant: input.variant as never, download: input.download });
      return { url, expiresAt: new Date(Number(new URL(url, "http://x").searchParams.get("expires")) * 1000) };
    });
}

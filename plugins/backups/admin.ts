import { z } from "zod";
import { RpcError, type AppRpcContext, type ProcedureBase, type RouteDefinition } from "../../kernel/index.js";
import { BackupRunning, type BackupFailure, type BackupsService } from "./backups.js";
import { BACKUP_NAME, type BackupInfo } from "./places.js";

/** What the dashboard shows above the list. */
export interface BackupsOverview {
  /** The directory, or `storage (backups/)`. */
  where: string;
  /** What a backup is: `embedded data directory, gzip tarball` or `pg_dump, custom format`. */
  kind: string;
  /** The cron expression, or null when backups are taken on demand only. */
  every: string | null;
  /** `jobs` (one run per tick across replicas), `process` (a timer here), or null. */
  scheduler: "jobs" | "process" | null;
  keep: number;
  running: boolean;
  lastFailure: BackupFailure | null;
  backups: BackupInfo[];
}

export interface BackupsAdminDeps {
  backups: BackupsService;
  overview: Omit<BackupsOverview, "running" | "lastFailure" | "backups">;
}

/**
 * `_admin.backups.*`, mounted by the admin plugin behind its role check (401 signed out, 403
 * without a role, before any input is read): the kept backups with where they are and the last
 * failure, one taken now, and one downloaded (`download` for the typed client, read whole; the
 * route streams it).
 */
export function backupsAdminSection(deps: BackupsAdminDeps) {
  // The bytes streamed from where they are kept, at `<admin path>/backups/<name>` (the dashboard's Download).
  const download: RouteDefinition = {
    method: "GET",
    path: "/backups/:name",
    handler: async (event) => {
      const name = event.params.name ?? "";
      if (!BACKUP_NAME.test(name)) throw new RpcError("BAD_REQUEST", { message: NOT_A_NAME });
      const stream = await deps.backups.open(name);
      if (!stream) throw new RpcError("NOT_FOUND", { message: `No backup ${name}` });
      return new Response(stream, { headers: { "content-type": typeOf(name), "content-disposition": `attachment; filename="${name}"`, "cache-control": "private, no-store" } });
    },
  };
  return Object.assign((gated: ProcedureBase<AppRpcContext>) => backupProcedures(gated, deps), { routes: [download] });
}

const NOT_A_NAME = "not a backup name (backup-<time>.tar.gz or .dump)";
const typeOf = (name: string) => (name.endsWith(".tar.gz") ? "application/gzip" : "application/octet-stream");

function backupProcedures(gated: ProcedureBase<AppRpcContext>, { backups, overview }: BackupsAdminDeps) {
  return {
    list: gated.handler(async (): Promise<BackupsOverview> => {
      const { running, lastFailure } = backups.status();
      return { ...overview, running, lastFailure, backups: await backups.list() };
    }),
    take: gated.handler(async (): Promise<BackupInfo> => {
      try {
        return await backups.take();
      } catch (error) {
        if (error instanceof BackupRunning) throw new RpcError("CONFLICT", { message: error.message });
        // Logged where it happened and kept as the last failure; the admin reads why, here and in the list.
        throw new RpcError("INTERNAL_SERVER_ERROR", { message: `The backup failed: ${(error as Error)?.message ?? String(error)}` });
      }
    }),
    download: gated
      .input(z.object({ name: z.string().regex(BACKUP_NAME, NOT_A_NAME) }))
      .handler(async ({ input }): Promise<File> => {
        const bytes = await backups.read(input.name);
        if (!bytes) throw new RpcError("NOT_FOUND", { message: `No backup ${input.name}` });
        return new File([bytes as Uint8Array<ArrayBuffer>], input.name, { type: typeOf(input.name) });
      }),
  };
}

/** What `_admin.backups` holds, for a typed client: `createClient<{ _admin: { backups: AdminBackupsRouter } }>`. */
export type AdminBackupsRouter = ReturnType<typeof backupProcedures>;

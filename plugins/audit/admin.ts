import { z } from "zod";
import { RpcError, type AppRpcContext, type DatabaseKind, type ProcedureBase, type RouteDefinition, type SchemaModel } from "../../kernel/index.js";
import type { Kysely } from "kysely";
import { AuditEntries, type EntryFilter } from "./entries.js";
import { restoreEntry } from "./restore.js";

const ACTOR_KINDS = ["user", "apiKey", "job", "anonymous", "system"] as const;
const OPS = ["insert", "update", "delete"] as const;
/** The most entries one export holds; narrow the filters (or page `list`) for more. */
export const EXPORT_MAX = 10_000;

export interface AuditAdminDeps {
  db: Kysely<any>;
  kind: DatabaseKind;
  schema: SchemaModel;
  entries: AuditEntries;
  audited: ReadonlySet<string>;
}

const filterShape = {
  table: z.string().min(1).optional(),
  key: z.string().min(1).max(500).optional(),
  actor: z.string().min(1).max(500).optional(),
  actorKind: z.enum(ACTOR_KINDS).optional(),
  op: z.enum(OPS).optional(),
  from: z.coerce.date().optional(),
  to: z.coerce.date().optional(),
};

/**
 * `_admin.audit.*` (the service `admin-section:audit`, mounted by the admin plugin behind its role
 * check): `list` pages entries newest first by any of table, key, actor, operation and time;
 * `get` reads one; `restore` puts a row back as an entry recorded it. `GET /_admin/audit/export`
 * sends the same filters' entries as JSON Lines.
 */
export function auditAdminSection(deps: AuditAdminDeps) {
  const section = (gated: ProcedureBase<AppRpcContext>) => auditProcedures(gated, deps);
  return Object.assign(section, { routes: [exportRoute(deps)] });
}

function known(deps: AuditAdminDeps, table: string | undefined): void {
  if (table !== undefined && !deps.audited.has(table)) throw new RpcError("BAD_REQUEST", { message: `table: "${table}" is not audited (audited: ${[...deps.audited].join(", ") || "none"})` });
}

function auditProcedures(gated: ProcedureBase<AppRpcContext>, deps: AuditAdminDeps) {
  const list = z.object({
    ...filterShape,
    cursor: z.string().regex(/^\d{1,19}$/, "a cursor is the nextCursor of a previous page").optional(),
    take: z.number().int().min(1).max(200).optional(),
  });
  const one = z.object({ id: z.string().regex(/^\d{1,19}$/, "an entry id is a string of digits") });
  const found = async (id: string) => {
    const entry = await deps.entries.get(id);
    if (!entry) throw new RpcError("NOT_FOUND", { message: `No audit entry ${id}` });
    return entry;
  };
  return {
    list: gated.input(list.default({})).handler(({ input }) => {
      known(deps, input.table);
      return deps.entries.page(input as EntryFilter, input.take ?? 50);
    }),
    get: gated.input(one).handler(({ input }) => found(input.id)),
    restore: gated.input(one).handler(async ({ input }) => {
      const entry = await found(input.id);
      const row = await restoreEntry(deps.db, deps.kind, deps.schema, entry);
      return { table: entry.table, key: entry.key, row };
    }),
  };
}

/** The entries matching the query string's filters, newest first, one JSON object per line. */
function exportRoute(deps: AuditAdminDeps): RouteDefinition {
  return {
    method: "GET",
    path: "/audit/export",
    handler: async (event) => {
      const query = Object.fromEntries(event.url.searchParams);
      const parsed = z.object(filterShape).strict().safeParse(query);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        throw new RpcError("BAD_REQUEST", { message: `${issue.path.join(".") || "query"}: ${issue.message}` });
      }
      known(deps, parsed.data.table);
      const { entries } = await deps.entries.page(parsed.data, EXPORT_MAX);
      const body = entries.map((entry) => JSON.stringify(entry)).join("\n") + (entries.length ? "\n" : "");
      return new Response(body, {
        headers: { "content-type": "application/x-ndjson; charset=utf-8", "content-disposition": 'attachment; filename="audit.jsonl"' },
      });
    },
  };
}

/** What `_admin.audit` holds, for a typed client: `createClient<{ _admin: { audit: AdminAuditRouter } }>`. */
export type AdminAuditRouter = ReturnType<typeof auditProcedures>;

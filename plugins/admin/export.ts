import { RpcError, assertRole, primaryKeyOf, toPlainJson, type AppDatabase, type RouteDefinition, type SealedApp } from "../../kernel/index.js";
import { assertSecondFactor } from "./second-factor.js";
import { csvRecord, isFreeText } from "./csv.js";
import { selectionInput } from "./data.js";
import type { AdminSettings } from "./options.js";
import { redact, refuseRelationFilter, refuseSecretFilter, refuseSecretOrder, refuseSecretSearch } from "./secrets.js";
import { tableOf, type AdminTable } from "./tables.js";

/** Rows read per statement while the download streams. */
const BATCH = 500;

const FORMATS = {
  csv: "text/csv; charset=utf-8",
  json: "application/json; charset=utf-8",
} as const;

type Row = Record<string, unknown>;

/**
 * `GET <path>/export/<table>.<csv|json>?where=<JSON>&orderBy=<JSON>&search=<words>`: every row the filter selects,
 * as the dashboard's table page lists them (the `_admin.data.list` language, secrets redacted),
 * streamed in pages (keyset; by `skip` for a table without a primary key) so a large export is never
 * held in memory. A GET with no side effect, so a cross-site link can at most start a download into
 * the admin's own browser; the admin check is the procedures' (401 signed out, 403 without a role),
 * before the query string is read.
 */
export interface ExportDeps {
  db: AppDatabase<any>;
  tables: ReadonlyMap<string, AdminTable>;
  settings: AdminSettings;
  /** For a failure once the download has started: reported as any route's, though the status is sent. */
  sealed: () => SealedApp;
}

export function exportRoute(path: string, { db, tables, settings, sealed }: ExportDeps): RouteDefinition {
  const query = (name: string) => (db.query as Record<string, any>)[name];
  return {
    method: "GET",
    path: `${path}/export/:file`,
    handler: async (event, context) => {
      assertRole("admin", settings.roles, context);
      assertSecondFactor(settings, context);
      const file = event.params.file ?? "";
      const dot = file.lastIndexOf(".");
      const format = file.slice(dot + 1);
      if (dot < 1 || !Object.hasOwn(FORMATS, format)) throw new RpcError("BAD_REQUEST", { message: `Name the export <table>.csv or <table>.json (got "${file}")` });
      const { where, orderBy, search } = selection(file.slice(0, dot), event.url.searchParams);
      const t = tableOf(tables, file.slice(0, dot));
      refuseSecretFilter(t.model.name, where);
      refuseRelationFilter(t.model, where);
      refuseSecretOrder(t.model.name, orderBy);
      refuseSecretSearch(t.model, search);
      const limit = settings.exportLimit;
      const count = await query(t.model.name).count({ where, search });
      if (count > limit) throw new RpcError("BAD_REQUEST", { message: `The filter selects ${count} rows; an export holds at most ${limit} (exportLimit): narrow the filter` });
      const key = primaryKeyOf(t.model);
      // A search's rank has no keyset: without a sort, a searched export comes in key order.
      const order = search !== undefined && !orderBy?.length && key ? [{ [key]: "asc" as const }] : orderBy;
      const pages = batches(key ? keyset(query(t.model.name), where, order, search) : offsets(query(t.model.name), t, where, orderBy, count, search), limit);
      // The first page is read before answering, so a bad ordering is still a 400.
      const first = await pages.next();
      const failed = (error: unknown) => void sealed().toError(error, "route", event);
      return new Response(streamed(writer(format as keyof typeof FORMATS, t), first, pages, failed), {
        headers: {
          "content-type": FORMATS[format as keyof typeof FORMATS],
          "content-disposition": `attachment; filename="${t.model.name}.${format}"`,
          "cache-control": "no-store",
          "x-content-type-options": "nosniff",
          "content-security-policy": "default-src 'none'; sandbox",
        },
      });
    },
  };
}

interface Writer {
  head: string;
  row(row: Row, index: number): string;
  tail: string;
}

/** Rows as plain JSON values (REST's: ISO dates, `date` columns as days, base64 bytes), secrets redacted. */
function writer(format: keyof typeof FORMATS, t: AdminTable): Writer {
  const columns = Object.keys(t.model.columns);
  const text = columns.map((column) => isFreeText(t.model.columns[column]!.type));
  const days = new Set(columns.filter((column) => t.model.columns[column]!.type === "date"));
  const plain = (row: Row) => toPlainJson(redact(t.model.name, row), days);
  if (format === "json") return { head: "[\n", row: (row, index) => `${index === 0 ? "" : ",\n"}${plain(row)}`, tail: "\n]\n" };
  return {
    head: csvRecord(columns),
    row: (row) => {
      const values = JSON.parse(plain(row)) as Row;
      return csvRecord(columns.map((column) => values[column]), text);
    },
    tail: "",
  };
}

/** The file, one page of rows per chunk, read as the client reads; a failure after the first page ends it cut short. */
function streamed(write: Writer, first: IteratorResult<Row[]>, pages: AsyncGenerator<Row[]>, failed: (error: unknown) => void): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let page = first;
  let index = 0;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(write.head));
    },
    async pull(controller) {
      if (page.done) {
        controller.enqueue(encoder.encode(write.tail));
        controller.close();
        return;
      }
      controller.enqueue(encoder.encode(page.value.map((row) => write.row(row, index++)).join("")));
      try {
        page = await pages.next();
      } catch (error) {
        // The status went out with the first page: the failure is reported, the download ends short.
        failed(error);
        controller.error(error);
      }
    },
    async cancel() {
      await pages.return(undefined);
    },
  });
}

/** `where` and `orderBy` (JSON each) and `search` (plain text) from the query string, checked as `_admin.data.list` checks them. */
function selection(table: string, params: URLSearchParams) {
  const raw: Row = { table };
  const search = params.get("search");
  if (search !== null && search !== "") raw.search = search;
  for (const name of ["where", "orderBy"]) {
    const text = params.get(name);
    if (text === null || text === "") continue;
    try {
      raw[name] = JSON.parse(text);
    } catch {
      throw new RpcError("BAD_REQUEST", { message: `${name}: not valid JSON` });
    }
  }
  const parsed = selectionInput.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new RpcError("BAD_REQUEST", { message: `Invalid input: ${issue.path.join(".")}: ${issue.message}` });
  }
  return parsed.data;
}

/** One read of the next rows, and whether more may follow. */
type Read = () => Promise<{ rows: Row[]; more: boolean }>;

/** Keyset pages (the kernel adds the primary key to the ordering, so pages never overlap). */
function keyset(table: any, where: unknown, orderBy: unknown, search: string | undefined): Read {
  let after: string | undefined;
  return async () => {
    const { items, nextCursor } = await table.findPage({ where, orderBy, take: BATCH, after, search });
    after = nextCursor ?? undefined;
    return { rows: items, more: nextCursor !== null };
  };
}

/**
 * A table without a primary key has no cursor: it pages by `skip`, ordered by the ordering asked for
 * then every other column, so only rows equal in every column can tie (and those read the same).
 * With a column that cannot be ordered by (jsonb, bytes, vector), rows that differ only there could
 * swap places between two reads: more than one read's worth is then refused before answering.
 */
function offsets(table: any, t: AdminTable, where: unknown, orderBy: readonly Record<string, string>[] | undefined, count: number, search: string | undefined): Read {
  const named = new Set((orderBy ?? []).flatMap((entry) => Object.keys(entry)));
  const columns = Object.entries(t.model.columns);
  const rest = columns.filter(([name, model]) => !named.has(name) && !UNORDERED.has(model.type)).map(([name]) => ({ [name]: "asc" }));
  const unordered = columns.find(([, model]) => UNORDERED.has(model.type));
  if (unordered && count > BATCH) {
    throw new RpcError("BAD_REQUEST", {
      message: `"${t.model.name}" has no primary key and its ${unordered[1].type} column "${unordered[0]}" cannot be ordered by, so it exports at most ${BATCH} rows at once (the filter selects ${count}): narrow the filter`,
    });
  }
  const order = [...(orderBy ?? []), ...rest];
  let skip = 0;
  return async () => {
    const rows = (await table.findMany({ where, orderBy: order, take: BATCH, skip, search })) as Row[];
    skip += rows.length;
    return { rows, more: rows.length === BATCH };
  };
}

/** Column types the query API cannot order by. */
const UNORDERED: ReadonlySet<string> = new Set(["jsonb", "bytes", "vector"]);

/** Pages until the last one, or until `limit` rows (rows added after the count stay out). */
async function* batches(read: Read, limit: number): AsyncGenerator<Row[], void, undefined> {
  let left = limit;
  while (left > 0) {
    const { rows: page, more } = await read();
    const rows = page.slice(0, left);
    left -= rows.length;
    if (rows.length > 0) yield rows;
    if (!more) return;
  }
}

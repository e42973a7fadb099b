import { useEffect, useState } from "preact/hooks";
import { client, messageOf, organizationsAdmin, type AdminOrganization, type Row, type TableInfo } from "./api.js";
import { display, filterValue, keyOf, operatorsFor } from "./values.js";
import { RowPanel } from "./row-panel.js";
import { NearestForm, SearchForm, type NearestQuery } from "./find.js";
import { rowsStatus } from "./pager.js";

const PAGE = 25;

interface Filter {
  column: string;
  op: string;
  value: string;
}

type Panel = { mode: "edit"; row: Row } | { mode: "create" } | undefined;

/** The filter chips (and the organization picked, on a tenant table) as `_admin.data.list`'s `where`, each value typed for its column. */
function whereOf(table: TableInfo, filters: Filter[], tenant?: { column: string; organizationId: string }) {
  const all = filters.map((f) => ({ [f.column]: { [f.op]: filterValue(table.columns.find((c) => c.name === f.column)!, f.value) } }));
  if (tenant) all.push({ [tenant.column]: { equals: tenant.organizationId } });
  return all.length ? { AND: all } : undefined;
}

/** The export route beside this page (`<dashboard path>/export/post.csv?where=...`): what the filters, search and sort select, every row. */
function exportHref(table: TableInfo, format: "csv" | "json", where: unknown, orderBy: unknown, search: string): string {
  const query = new URLSearchParams();
  if (where) query.set("where", JSON.stringify(where));
  if (orderBy) query.set("orderBy", JSON.stringify(orderBy));
  if (search) query.set("search", search);
  const text = query.toString();
  return `${location.pathname.replace(/\/$/, "")}/export/${encodeURIComponent(table.name)}.${format}${text ? `?${text}` : ""}`;
}

/**
 * One table: a page of rows, sortable columns, filter chips, a search box (tables with a full-text
 * index), nearest rows (tables with a vector column), and the row panel.
 *
 * Pages move by cursor: Next passes the page's `nextCursor` as `after`, Previous pops the stack of
 * cursors it came through, the first page has none. A search without a sorted column is ordered by
 * rank, which has no cursor, so it pages by `skip`, as does a table without a primary key. A nearest
 * query is one list of k rows, without pages or sorting.
 */
export function Browse({ table, mail = false, audit = false, tenant, onChanged }: { table: TableInfo; mail?: boolean; audit?: boolean; tenant?: string; onChanged: () => void }) {
  const [skip, setSkip] = useState(0);
  // The `after` of each page beyond the first, in the order they were reached: the last is this page's.
  const [cursors, setCursors] = useState<string[]>([]);
  const [order, setOrder] = useState<[string, "asc" | "desc"] | undefined>();
  const [filters, setFilters] = useState<Filter[]>([]);
  const [search, setSearch] = useState("");
  // On a tenant-scoped table: the organization whose rows are shown ("" for every organization's).
  const [organization, setOrganization] = useState("");
  const [nearest, setNearest] = useState<NearestQuery>();
  // The page remembers where it starts, so the pager never describes rows not yet shown.
  // `ranked`: the rows were loaded in rank order, so the status describes the rows shown, not a sort clicked since.
  const [page, setPage] = useState<{ data: Row[]; count: number; start: number; nextCursor?: string | null; nearest?: NearestQuery; ranked?: boolean }>();
  const [error, setError] = useState<string>();
  const [panel, setPanel] = useState<Panel>();
  // Primary-key values of the rows ticked on this page; a new page starts with none.
  const [selected, setSelected] = useState<unknown[]>([]);
  const [confirming, setConfirming] = useState(false);
  const filterable = table.columns.filter((c) => !c.secret && operatorsFor(c).length > 0);
  const key = table.writable ? table.primaryKey : null;
  const where = whereOf(table, filters, tenant && organization ? { column: tenant, organizationId: organization } : undefined);
  const orderBy = order ? [{ [order[0]]: order[1] }] : undefined;
  const vectors = table.columns.filter((c) => c.vector && !c.secret);
  // Rank (a search without a sort) has no cursor, and neither has a table without a primary key.
  const byCursor = table.primaryKey !== null && !(search && !order);
  const after = cursors.at(-1);

  const load = async () => {
    try {
      const text = search || undefined;
      if (nearest) {
        const near = nearest.without ? (where ? { AND: [...where.AND, nearest.without] } : nearest.without) : where;
        const found = await client._admin.data.list({ table: table.name, where: near, search: text, nearest: { column: nearest.column, vector: nearest.vector, k: nearest.k } });
        setPage({ ...found, start: 0, nearest });
      } else if (byCursor) {
        setPage({ ...(await client._admin.data.list({ table: table.name, where, orderBy, search: text, take: PAGE, page: true, after })), start: cursors.length * PAGE });
      } else {
        setPage({ ...(await client._admin.data.list({ table: table.name, where, orderBy, search: text, take: PAGE, skip })), start: skip, ranked: Boolean(text && !order) });
      }
      setSelected([]);
      setConfirming(false);
      setError(undefined);
    } catch (e) {
      setError(messageOf(e));
    }
  };
  useEffect(() => void load(), [table.name, skip, cursors, order, filters, organization, search, nearest]);

  /** Back to the first page: any change of what is selected or how it is ordered. */
  const restart = () => {
    setSkip(0);
    setCursors([]);
  };
  const sortBy = (column: string) => {
    restart();
    setOrder(order?.[0] === column && order[1] === "asc" ? [column, "desc"] : [column, "asc"]);
  };
  const addFilter = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const filter = { column: String(form.get("column")), op: String(form.get("op")), value: String(form.get("value")) };
    restart();
    setFilters([...filters, filter]);
  };
  const find = (query: NearestQuery | undefined) => {
    restart();
    setPanel(undefined);
    setNearest(query);
  };
  // The row itself, at distance 0, is left out by its key (a table without one cannot name it).
  const similar = (row: Row, column: string) => {
    const pk = table.primaryKey;
    find({ column, vector: row[column] as number[], k: PAGE, ...(pk ? { from: `${table.name} ${display(row[pk])}`, without: { [pk]: { not: row[pk] } } } : { from: "the row" }) });
  };
  const next = () => (byCursor ? page?.nextCursor && setCursors([...cursors, page.nextCursor]) : setSkip(skip + PAGE));
  const previous = () => (byCursor ? setCursors(cursors.slice(0, -1)) : setSkip(Math.max(0, skip - PAGE)));
  const atStart = byCursor ? cursors.length === 0 : skip === 0;
  const atEnd = !page || (byCursor ? !page.nextCursor : skip + PAGE >= page.count);
  const written = async () => {
    setPanel(undefined);
    await load();
    onChanged();
  };
  const ticked = (row: Row) => selected.includes(row[key!]);
  const tick = (row: Row) => setSelected(ticked(row) ? selected.filter((k) => k !== row[key!]) : [...selected, row[key!]]);
  const allTicked = page !== undefined && page.data.length > 0 && page.data.every(ticked);
  const removeSelected = async () => {
    try {
      await client._admin.data.deleteMany({ table: table.name, keys: selected as (string | number)[] });
      await written();
    } catch (e) {
      setConfirming(false);
      setError(messageOf(e));
    }
  };

  return (
    <>
      <div class="title">
        <h1>{table.name}</h1>
        {table.writable ? (
          <button type="button" onClick={() => setPanel({ mode: "create" })}>New row</button>
        ) : (
          <p class="note">Read-only: these rows hold credentials and belong to the auth library.</p>
        )}
      </div>
      {tenant && (
        <OrganizationFilter
          value={organization}
          onChange={(id) => {
            restart();
            setOrganization(id);
          }}
          onError={setError}
        />
      )}
      <FilterForm table={table} columns={filterable.map((c) => c.name)} onSubmit={addFilter} />
      {table.search && (
        <SearchForm
          value={search}
          onSearch={(text) => {
            restart();
            setSearch(text);
          }}
        />
      )}
      {vectors.length > 0 && <NearestForm columns={vectors} onFind={find} onError={setError} />}
      {filters.length > 0 && (
        <ul class="chips" aria-label="Filters">
          {filters.map((f, i) => (
            <li class="chip on" key={i}>
              {f.column} {f.op} {f.value}{" "}
              <button
                type="button"
                class="quiet"
                aria-label={`Remove filter ${f.column} ${f.op} ${f.value}`}
                onClick={() => {
                  restart();
                  setFilters(filters.filter((_, j) => j !== i));
                }}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      {error && <p role="alert" class="error">{error}</p>}
      {page && (
        <>
          <div class="toolbar">
            {/* An export writes what the filters and search select; a nearest list is not a selection of its own. */}
            {!page.nearest && (
              <>
                <a class="button" href={exportHref(table, "csv", where, orderBy, search)} download>Export CSV</a>
                <a class="button" href={exportHref(table, "json", where, orderBy, search)} download>Export JSON</a>
              </>
            )}
            {selected.length > 0 && (confirming ? (
              <>
                <button type="button" class="danger" onClick={removeSelected}>Confirm delete of {selected.length} {selected.length === 1 ? "row" : "rows"}</button>
                <button type="button" class="quiet" onClick={() => setConfirming(false)}>Cancel</button>
              </>
            ) : (
              <button type="button" class="danger" onClick={() => setConfirming(true)}>Delete selected ({selected.length})</button>
            ))}
          </div>
          <div class="scroll">
            <table aria-label={`${table.name} rows`}>
              <thead>
                <tr>
                  {key && (
                    <th scope="col" class="pick">
                      <input type="checkbox" aria-label="Select all on this page" checked={allTicked} onChange={() => setSelected(allTicked ? [] : page.data.map((row) => row[key]))} />
                    </th>
                  )}
                  {page.nearest && <th scope="col">_distance</th>}
                  {table.columns.map((c) => (
                    <th scope="col" key={c.name} aria-sort={order?.[0] === c.name && !page.nearest ? (order[1] === "asc" ? "ascending" : "descending") : undefined}>
                      {page.nearest || c.secret || c.type === "jsonb" || c.type === "bytes" || c.vector ? (
                        c.name
                      ) : (
                        <button type="button" class="sort" onClick={() => sortBy(c.name)}>
                          {c.name}{order?.[0] === c.name ? (order[1] === "asc" ? " ▲" : " ▼") : ""}
                        </button>
                      )}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {page.data.map((row, i) => (
                  <tr key={String(table.primaryKey ? row[table.primaryKey] : i)}>
                    {key && (
                      <td class="pick">
                        <input type="checkbox" aria-label={`Select ${table.name} ${display(row[key])}`} checked={ticked(row)} onChange={() => tick(row)} />
                      </td>
                    )}
                    {page.nearest && <td class="num">{typeof row._distance === "number" ? row._distance.toFixed(4) : ""}</td>}
                    {table.columns.map((c) => (
                      <td key={c.name} class={c.secret ? "redacted" : undefined}>
                        {c.name === table.primaryKey ? (
                          <button type="button" class="link" aria-label={`Open ${table.name} ${display(row[c.name])}`} onClick={() => setPanel({ mode: "edit", row })}>
                            {display(row[c.name])}
                          </button>
                        ) : (
                          display(row[c.name])
                        )}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {page.nearest ? (
            <div class="pager">
              <span role="status">
                {page.data.length === 0 ? "No rows" : `${page.data.length} ${page.data.length === 1 ? "row" : "rows"}`} nearest to {page.nearest.from} by {page.nearest.column}
              </span>
              <button type="button" onClick={() => find(undefined)}>Back to all rows</button>
            </div>
          ) : (
            <div class="pager">
              <span role="status">
                {rowsStatus(page.start, page.data.length, page.count, page.nextCursor === undefined ? page.start + page.data.length < page.count : page.nextCursor !== null)}
                {page.ranked ? ", best matches first" : ""}
              </span>
              <button type="button" disabled={atStart} onClick={previous}>Previous page</button>
              <button type="button" disabled={atEnd} onClick={next}>Next page</button>
              {page.data.length === 0 && page.start > 0 && <button type="button" onClick={restart}>Back to the first page</button>}
            </div>
          )}
        </>
      )}
      {panel && (
        <RowPanel
          table={table}
          row={panel.mode === "edit" ? panel.row : undefined}
          rowKey={panel.mode === "edit" ? keyOf(table, panel.row) : undefined}
          mail={mail}
          audit={audit}
          vectors={vectors}
          onSimilar={panel.mode === "edit" ? (column) => similar(panel.row, column) : undefined}
          onClose={() => setPanel(undefined)}
          onWritten={written}
        />
      )}
    </>
  );
}

/** A tenant-scoped table's organization picker: every organization by name (the first 200), or all of them. */
function OrganizationFilter({ value, onChange, onError }: { value: string; onChange: (id: string) => void; onError: (message: string) => void }) {
  const [organizations, setOrganizations] = useState<AdminOrganization[]>([]);
  useEffect(() => void organizationsAdmin.list({ take: 200 }).then((page) => setOrganizations(page.data), (e) => onError(messageOf(e))), []);
  return (
    <div class="filter">
      <label>
        Organization
        <select name="organization" aria-label="Organization" value={value} onChange={(e) => onChange((e.currentTarget as HTMLSelectElement).value)}>
          <option value="">All organizations</option>
          {organizations.map((org) => <option key={org.id} value={org.id}>{org.name} ({org.slug})</option>)}
        </select>
      </label>
    </div>
  );
}

function FilterForm({ table, columns, onSubmit }: { table: TableInfo; columns: string[]; onSubmit: (event: Event) => void }) {
  const [column, setColumn] = useState(columns[0]);
  const ops = operatorsFor(table.columns.find((c) => c.name === column) ?? table.columns[0]!);
  if (columns.length === 0) return null;
  return (
    <form class="filter" onSubmit={onSubmit} aria-label="Add a filter">
      <label>
        Filter column
        <select name="column" value={column} onChange={(e) => setColumn((e.currentTarget as HTMLSelectElement).value)}>
          {columns.map((c) => <option key={c} value={c}>{c}</option>)}
        </select>
      </label>
      <label>
        Operator
        <select name="op">{ops.map((op) => <option key={op} value={op}>{op}</option>)}</select>
      </label>
      <label>
        Value
        <input name="value" required />
      </label>
      <button type="submit">Add filter</button>
    </form>
  );
}

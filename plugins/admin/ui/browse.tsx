import { useEffect, useState } from "preact/hooks";
import { client, messageOf, type Row, type TableInfo } from "./api.js";
import { display, filterValue, keyOf, operatorsFor } from "./values.js";
import { RowPanel } from "./row-panel.js";

const PAGE = 25;

interface Filter {
  column: string;
  op: string;
  value: string;
}

type Panel = { mode: "edit"; row: Row } | { mode: "create" } | undefined;

/** The filter chips as `_admin.data.list`'s `where`, each value typed for its column. */
function whereOf(table: TableInfo, filters: Filter[]) {
  return filters.length
    ? { AND: filters.map((f) => ({ [f.column]: { [f.op]: filterValue(table.columns.find((c) => c.name === f.column)!, f.value) } })) }
    : undefined;
}

/** The export route beside this page (`<dashboard path>/export/post.csv?where=...`): what the filters and sort select, every row. */
function exportHref(table: TableInfo, format: "csv" | "json", where: unknown, orderBy: unknown): string {
  const query = new URLSearchParams();
  if (where) query.set("where", JSON.stringify(where));
  if (orderBy) query.set("orderBy", JSON.stringify(orderBy));
  const search = query.toString();
  return `${location.pathname.replace(/\/$/, "")}/export/${encodeURIComponent(table.name)}.${format}${search ? `?${search}` : ""}`;
}

/** One table: a page of rows, sortable columns, filter chips, and the row panel. */
export function Browse({ table, mail = false, onChanged }: { table: TableInfo; mail?: boolean; onChanged: () => void }) {
  const [skip, setSkip] = useState(0);
  const [order, setOrder] = useState<[string, "asc" | "desc"] | undefined>();
  const [filters, setFilters] = useState<Filter[]>([]);
  // The page remembers the offset it was loaded for, so the pager never describes rows not yet shown.
  const [page, setPage] = useState<{ data: Row[]; count: number; skip: number }>();
  const [error, setError] = useState<string>();
  const [panel, setPanel] = useState<Panel>();
  // Primary-key values of the rows ticked on this page; a new page starts with none.
  const [selected, setSelected] = useState<unknown[]>([]);
  const [confirming, setConfirming] = useState(false);
  const filterable = table.columns.filter((c) => !c.secret && operatorsFor(c).length > 0);
  const key = table.writable ? table.primaryKey : null;
  const where = whereOf(table, filters);
  const orderBy = order ? [{ [order[0]]: order[1] }] : undefined;

  const load = async () => {
    try {
      setPage({ ...(await client._admin.data.list({ table: table.name, where, orderBy, take: PAGE, skip })), skip });
      setSelected([]);
      setConfirming(false);
      setError(undefined);
    } catch (e) {
      setError(messageOf(e));
    }
  };
  useEffect(() => void load(), [table.name, skip, order, filters]);

  const sortBy = (column: string) => {
    setSkip(0);
    setOrder(order?.[0] === column && order[1] === "asc" ? [column, "desc"] : [column, "asc"]);
  };
  const addFilter = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const filter = { column: String(form.get("column")), op: String(form.get("op")), value: String(form.get("value")) };
    setSkip(0);
    setFilters([...filters, filter]);
  };
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
      <FilterForm table={table} columns={filterable.map((c) => c.name)} onSubmit={addFilter} />
      {filters.length > 0 && (
        <ul class="chips" aria-label="Filters">
          {filters.map((f, i) => (
            <li class="chip on" key={i}>
              {f.column} {f.op} {f.value}{" "}
              <button type="button" class="quiet" aria-label={`Remove filter ${f.column} ${f.op} ${f.value}`} onClick={() => setFilters(filters.filter((_, j) => j !== i))}>×</button>
            </li>
          ))}
        </ul>
      )}
      {error && <p role="alert" class="error">{error}</p>}
      {page && (
        <>
          <div class="toolbar">
            <a class="button" href={exportHref(table, "csv", where, orderBy)} download>Export CSV</a>
            <a class="button" href={exportHref(table, "json", where, orderBy)} download>Export JSON</a>
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
                  {table.columns.map((c) => (
                    <th scope="col" key={c.name} aria-sort={order?.[0] === c.name ? (order[1] === "asc" ? "ascending" : "descending") : undefined}>
                      {c.secret || c.type === "jsonb" || c.type === "bytes" ? (
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
          <div class="pager">
            <span role="status">
              {page.count === 0 ? "No rows" : `Rows ${page.skip + 1}–${Math.min(page.skip + PAGE, page.count)} of ${page.count}`}
            </span>
            <button type="button" disabled={skip === 0} onClick={() => setSkip(Math.max(0, skip - PAGE))}>Previous page</button>
            <button type="button" disabled={skip + PAGE >= page.count} onClick={() => setSkip(skip + PAGE)}>Next page</button>
          </div>
        </>
      )}
      {panel && (
        <RowPanel
          table={table}
          row={panel.mode === "edit" ? panel.row : undefined}
          rowKey={panel.mode === "edit" ? keyOf(table, panel.row) : undefined}
          mail={mail}
          onClose={() => setPanel(undefined)}
          onWritten={written}
        />
      )}
    </>
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

import { useState } from "preact/hooks";
import type { Column } from "./api.js";

/** A `nearest` query of the table page: what `_admin.data.list` takes, plus what the status line names it by. */
export interface NearestQuery {
  column: string;
  vector: number[];
  k: number;
  /** "post 12" for "similar to this row", "the pasted vector" otherwise. */
  from: string;
  /** Similar rows: the row's own key, so the row is not its own nearest (`{ id: { not: 12 } }`). */
  without?: Record<string, { not: unknown }>;
}

/** The search box of a table with a full-text index: every word must match, best match first unless a column is sorted. */
export function SearchForm({ value, onSearch }: { value: string; onSearch: (text: string) => void }) {
  const [text, setText] = useState(value);
  const submit = (event: Event) => {
    event.preventDefault();
    onSearch(text.trim());
  };
  const clear = () => {
    setText("");
    onSearch("");
  };
  return (
    <form class="filter" role="search" aria-label="Search rows" onSubmit={submit}>
      <label>
        Search
        <input type="search" name="search" value={text} maxLength={500} onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)} />
      </label>
      <button type="submit">Search</button>
      {value && <button type="button" class="quiet" onClick={clear}>Clear search</button>}
    </form>
  );
}

/** Parses a pasted vector: a JSON array (or a comma-separated list) of exactly `dimensions` numbers. */
export function parseVector(text: string, dimensions: number): number[] {
  const trimmed = text.trim();
  let values: unknown;
  try {
    values = JSON.parse(trimmed.startsWith("[") ? trimmed : `[${trimmed}]`);
  } catch {
    throw new Error("Vector: not a list of numbers (paste a JSON array such as [0.1, 0.2, 0.3])");
  }
  if (!Array.isArray(values) || !values.every((v) => typeof v === "number" && Number.isFinite(v))) throw new Error("Vector: not a list of numbers");
  if (values.length !== dimensions) throw new Error(`Vector: expected ${dimensions} numbers, got ${values.length}`);
  return values;
}

/** "Nearest rows" of a table with vector columns: a pasted vector and how many rows to answer. */
export function NearestForm({ columns, onFind, onError }: { columns: Column[]; onFind: (query: NearestQuery) => void; onError: (message: string) => void }) {
  const [column, setColumn] = useState(columns[0]!.name);
  const submit = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const model = columns.find((c) => c.name === column)!;
    try {
      const vector = parseVector(String(form.get("vector")), model.vector!.dimensions);
      onFind({ column, vector, k: Number(form.get("k")), from: "the pasted vector" });
    } catch (e) {
      onError((e as Error).message);
    }
  };
  return (
    <details class="nearest">
      <summary>Nearest rows</summary>
      <form class="filter" aria-label="Find nearest rows" onSubmit={submit}>
        <label>
          Vector column
          <select name="column" value={column} onChange={(e) => setColumn((e.currentTarget as HTMLSelectElement).value)}>
            {columns.map((c) => <option key={c.name} value={c.name}>{c.name} ({c.vector!.dimensions})</option>)}
          </select>
        </label>
        <label>
          Vector
          <textarea name="vector" rows={1} required placeholder="[0.1, 0.2, …]" />
        </label>
        <label>
          Rows
          <input type="number" name="k" min={1} value={25} required />
        </label>
        <button type="submit">Find nearest</button>
      </form>
    </details>
  );
}

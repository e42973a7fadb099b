import type { ChangeEvent } from "./changes.js";
import type { LiveFilter, LiveTable, Pin } from "./live-match.js";

/** A change as the hub hears it: from the app's own writes, or published by a live provider. */
export type LiveChange = Pick<ChangeEvent, "table"> & Partial<Pick<ChangeEvent, "op" | "keys" | "rows">>;

/** What the index needs of a live query. */
export interface Watched {
  invalidate(): void;
  readonly filter?: LiveFilter;
}

/**
 * The live queries reading one table, indexed so a change re-runs only those it can affect.
 *
 * - `always`: queries a written row cannot decide (includes, `skip`, an unreadable key), and every
 *   query when the change does not say which rows it wrote (raw SQL, a statement without
 *   `RETURNING`, a truncate, a provider that sends only the table).
 * - Matched queries are re-run when a written row's key is in their last snapshot (it may leave the
 *   result, or change in it) or when the row as written may match their filter (it may enter it).
 *   A deleted row outside a snapshot cannot change a first page, so deletes need keys only.
 * - Candidates for "may match" come from one pin per query (a top-level equality, `ownerId = u`):
 *   a written row is tested against the queries pinned to its value, plus the unpinned ones. So a
 *   write to one owner's row costs the queries of that owner, not every query on the table.
 * - A query whose run is in flight may read the table before or after the change: it is re-run.
 */
export class TableWatch<Q extends Watched> {
  readonly #always = new Set<Q>();
  readonly #matched = new Set<Q>();
  readonly #unpinned = new Set<Q>();
  readonly #pinned = new Map<string, Map<string, Set<Q>>>();
  readonly #pins = new Map<Q, Pin>();
  readonly #byKey = new Map<string, Set<Q>>();
  readonly #keys = new Map<Q, readonly string[]>();
  readonly #running = new Set<Q>();
  #table: LiveTable | undefined;

  get size(): number {
    return this.#always.size + this.#matched.size;
  }

  add(query: Q): void {
    const filter = query.filter;
    if (!filter) {
      this.#always.add(query);
      return;
    }
    this.#table ??= filter.table;
    this.#matched.add(query);
    // The pin with the fewest queries so far: an owner's value rather than a status every query shares.
    let best: { pin: Pin; set: Set<Q> | undefined } | undefined;
    for (const pin of filter.pins) {
      const set = this.#pinned.get(pin.column)?.get(pin.value);
      if (!best || (set?.size ?? 0) <= (best.set?.size ?? 0)) best = { pin, set };
    }
    if (!best) {
      this.#unpinned.add(query);
      return;
    }
    const { column, value } = best.pin;
    let values = this.#pinned.get(column);
    if (!values) this.#pinned.set(column, (values = new Map()));
    let set = values.get(value);
    if (!set) values.set(value, (set = new Set()));
    set.add(query);
    this.#pins.set(query, best.pin);
  }

  delete(query: Q): void {
    this.#always.delete(query);
    if (!this.#matched.delete(query)) return;
    this.#unpinned.delete(query);
    this.#running.delete(query);
    this.#index(query, []);
    const pin = this.#pins.get(query);
    if (!pin) return;
    this.#pins.delete(query);
    const values = this.#pinned.get(pin.column)!;
    const set = values.get(pin.value)!;
    set.delete(query);
    if (set.size === 0) values.delete(pin.value);
    if (values.size === 0) this.#pinned.delete(pin.column);
  }

  /** A matched query started (true) or finished (false) a run. */
  running(query: Q, running: boolean): void {
    if (!this.#matched.has(query)) return;
    if (running) this.#running.add(query);
    else this.#running.delete(query);
  }

  /** A matched query's subscribers got `rows`: its keys are what a change is checked against. */
  snapshot(query: Q, rows: unknown): void {
    if (!this.#matched.has(query)) return;
    const table = this.#table!;
    const keys = Array.isArray(rows) ? rows.map((row) => table.keyOf((row as Record<string, unknown> | null)?.[table.key])) : [undefined];
    if (keys.includes(undefined)) {
      this.delete(query);
      this.#always.add(query);
      return;
    }
    this.#index(query, keys as string[]);
  }

  notify(change: LiveChange): void {
    for (const query of [...this.#always]) query.invalidate();
    if (this.#matched.size === 0) return;
    for (const query of [...(this.#affected(change) ?? this.#matched)]) query.invalidate();
  }

  /** The matched queries `change` can affect, or undefined when it does not say enough to tell. */
  #affected({ op, keys, rows }: LiveChange): Set<Q> | undefined {
    const table = this.#table!;
    if (!op || (op === "delete" ? !keys && !rows : !rows)) return undefined;
    const out = new Set(this.#running);
    const holding = (value: unknown): boolean => {
      const key = table.keyOf(value);
      if (key === undefined) return false;
      for (const query of this.#byKey.get(key) ?? []) out.add(query);
      return true;
    };
    for (const value of keys ?? []) if (!holding(value)) return undefined;
    for (const row of rows ?? []) {
      if (!holding(row[table.key])) return undefined;
      if (op === "delete") continue;
      const test = (query: Q) => {
        if (!out.has(query) && query.filter!.mayMatch(row)) out.add(query);
      };
      for (const [column, values] of this.#pinned) {
        const value = table.valueOf(column, row);
        // NULL equals nothing; an unknown value may equal any pin.
        if (value === null) continue;
        if (value === undefined) for (const set of values.values()) set.forEach(test);
        else values.get(value)?.forEach(test);
      }
      this.#unpinned.forEach(test);
    }
    return out;
  }

  #index(query: Q, keys: readonly string[]): void {
    for (const key of this.#keys.get(query) ?? []) {
      const set = this.#byKey.get(key);
      set?.delete(query);
      if (set?.size === 0) this.#byKey.delete(key);
    }
    if (keys.length === 0) {
      this.#keys.delete(query);
      return;
    }
    this.#keys.set(query, keys);
    for (const key of keys) {
      let set = this.#byKey.get(key);
      if (!set) this.#byKey.set(key, (set = new Set()));
      set.add(query);
    }
  }
}

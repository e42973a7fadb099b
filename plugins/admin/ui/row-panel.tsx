import { useState } from "preact/hooks";
import { client, messageOf, type Column, type Row, type TableInfo } from "./api.js";
import { display, parseField } from "./values.js";
import { SendReset } from "./mail.js";
import { usePanel } from "./panel.js";
import { RowHistory } from "./row-history.js";

interface Props {
  table: TableInfo;
  /** The row being edited; absent when creating. */
  row?: Row;
  rowKey?: Row;
  /** The app has `.mail()`: a user row offers "Send a password reset". */
  mail?: boolean;
  /** The table's vector columns: a row with a vector offers "Similar rows" by each. */
  vectors?: Column[];
  onSimilar?: (column: string) => void;
  /** The app has `.audit()`: an existing row shows its history. */
  audit?: boolean;
  onClose: () => void;
  onWritten: () => void;
}

/** The row side panel: a form built from the column types; read-only and redacted columns shown as such. */
export function RowPanel({ table, row, rowKey, mail, vectors = [], onSimilar, audit, onClose, onWritten }: Props) {
  const creating = row === undefined;
  const initial = Object.fromEntries(table.columns.map((c) => [c.name, fieldText(c, row?.[c.name])]));
  const [values, setValues] = useState<Record<string, string | boolean>>(initial);
  const [touched, setTouched] = useState<Set<string>>(new Set());
  const [error, setError] = useState<string>();
  const [confirming, setConfirming] = useState(false);
  const panel = usePanel(onClose);
  const editable = (c: Column) => table.writable && !c.readonly && !c.secret;
  const shown = table.columns.filter((c) => !(creating && (c.readonly || c.secret)));

  const set = (name: string, value: string | boolean) => {
    setValues({ ...values, [name]: value });
    setTouched(new Set(touched).add(name));
  };

  const save = async (event: Event) => {
    event.preventDefault();
    try {
      const data: Row = {};
      for (const c of table.columns) if (editable(c) && touched.has(c.name) && values[c.name] !== initial[c.name]) data[c.name] = parseField(c, values[c.name]!);
      if (creating) await client._admin.data.create({ table: table.name, data });
      else await client._admin.data.update({ table: table.name, where: rowKey!, data });
      onWritten();
    } catch (e) {
      setError(messageOf(e));
    }
  };
  const remove = async () => {
    try {
      await client._admin.data.delete({ table: table.name, where: rowKey! });
      onWritten();
    } catch (e) {
      setError(messageOf(e));
    }
  };

  const title = creating ? `New ${table.name} row` : `${table.name} ${display(rowKey && Object.values(rowKey)[0])}`;
  return (
    <aside class="panel" aria-label={title} ref={panel}>
      <form onSubmit={save}>
        <div class="title">
          <h2>{title}</h2>
          <button type="button" class="quiet" onClick={onClose}>Close</button>
        </div>
        {shown.map((c) => (
          <Field key={c.name} column={c} value={values[c.name]!} disabled={!editable(c)} onInput={(v) => set(c.name, v)} />
        ))}
        {error && <p role="alert" class="error">{error}</p>}
        {table.writable && (
          <div class="actions">
            <button type="submit">{creating ? "Create" : "Save"}</button>
            {!creating && rowKey && (confirming ? (
              <button type="button" class="danger" onClick={remove}>Confirm delete</button>
            ) : (
              <button type="button" class="danger" onClick={() => setConfirming(true)}>Delete</button>
            ))}
          </div>
        )}
        {onSimilar && vectors.some((c) => Array.isArray(row?.[c.name])) && (
          <div class="actions">
            {vectors.filter((c) => Array.isArray(row?.[c.name])).map((c) => (
              <button type="button" key={c.name} onClick={() => onSimilar(c.name)}>
                {vectors.length === 1 ? "Similar rows" : `Similar rows by ${c.name}`}
              </button>
            ))}
          </div>
        )}
        {mail && table.name === "user" && !creating && typeof rowKey?.id === "string" && <SendReset userId={rowKey.id} />}
        {!table.primaryKey && !creating && <p class="note">This table has no primary key, so its rows cannot be edited here.</p>}
      </form>
      {audit && !creating && rowKey && table.primaryKey && <RowHistory table={table.name} rowKey={String(Object.values(rowKey)[0])} onRestored={onWritten} />}
    </aside>
  );
}

function fieldText(column: Column, value: unknown): string | boolean {
  if (column.type === "boolean") return value === true;
  if (column.type === "date" && value instanceof Date) return value.toISOString().slice(0, 10);
  if (column.type === "jsonb" && value !== undefined && value !== null) return JSON.stringify(value, null, 2);
  return display(value);
}

let fields = 0;

/** One form field: the label is the column name alone; the type and state are its description. */
function Field({ column: c, value, disabled, onInput }: { column: Column; value: string | boolean; disabled: boolean; onInput: (value: string | boolean) => void }) {
  const [id] = useState(() => `field-${++fields}`);
  const hint = [c.type, c.nullable ? "optional" : "", c.primaryKey ? "key" : "", c.secret ? "redacted" : c.readonly ? "read-only" : ""].filter(Boolean).join(", ");
  const common = { id, name: c.name, disabled, "aria-describedby": `${id}-hint` };
  const text = (e: Event) => onInput((e.currentTarget as HTMLInputElement).value);
  let control;
  if (c.type === "boolean") {
    control = <input type="checkbox" {...common} checked={value === true} onChange={(e) => onInput((e.currentTarget as HTMLInputElement).checked)} />;
  } else if (c.enum && !c.enum.multiple) {
    control = (
      <select {...common} value={String(value)} onChange={text}>
        {(c.nullable || value === "") && <option value="">—</option>}
        {c.enum.values.map((v) => <option key={v} value={v}>{v}</option>)}
      </select>
    );
  } else if (c.type === "jsonb") {
    control = <textarea {...common} value={String(value)} onInput={text} rows={4} />;
  } else {
    const type = c.type === "date" ? "date" : ["serial", "integer", "real"].includes(c.type) ? "number" : "text";
    control = <input {...common} type={type} step={type === "number" ? "any" : undefined} value={String(value)} disabled={disabled || c.type === "bytes"} onInput={text} />;
  }
  return (
    <div class={c.type === "boolean" ? "field check" : "field"}>
      <label for={id}>{c.name}</label>
      {control}
      <small id={`${id}-hint`}>{hint}</small>
    </div>
  );
}

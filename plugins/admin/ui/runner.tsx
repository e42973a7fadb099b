import { useEffect, useState } from "preact/hooks";
import { client, messageOf, statusOf } from "./api.js";
import { formFields, formValue, initialText, type FormField, type JsonSchema } from "./schema-form.js";

type Procedure = Awaited<ReturnType<typeof client._admin.procedures>>[number];
type Outcome = { ok: true; value: unknown } | { ok: false; status: number; body: unknown; message: string };

/** Calls `name` through `/rpc` with the admin's own session, as any request of theirs would. */
function call(name: string, input: unknown): Promise<unknown> {
  const procedure = name.split(".").reduce((node: any, part) => node[part], client) as (input: unknown) => Promise<unknown>;
  return procedure(input);
}

/** A value as readable JSON: dates as ISO strings, bytes by their length. */
function pretty(value: unknown): string {
  if (value === undefined) return "(no value)";
  return JSON.stringify(value, (_key, v) => (v instanceof Uint8Array ? `(${v.byteLength} bytes)` : typeof v === "bigint" ? v.toString() : v), 2);
}

/** Every procedure of the app (but `_admin.*` and streams), run as the signed-in admin with a form built from its input. */
export function Runner() {
  const [procedures, setProcedures] = useState<Procedure[]>();
  const [name, setName] = useState<string>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    client._admin.procedures().then(
      (list) => {
        setProcedures(list);
        setName(list[0]?.name);
      },
      (e) => setError(messageOf(e)),
    );
  }, []);
  const current = procedures?.find((p) => p.name === name);
  return (
    <>
      <h1>Procedures</h1>
      <p class="note">
        Runs a procedure as you, through <code>/rpc</code>: its permission, validation and errors are exactly those of any request of
        yours. Streams and the dashboard's own <code>_admin</code> procedures are not listed.
      </p>
      {error && <p role="alert" class="error">{error}</p>}
      {procedures && procedures.length === 0 && <p>The app has no procedures to run.</p>}
      {procedures && procedures.length > 0 && (
        <label class="pick-procedure">
          Procedure
          <select value={name} onChange={(e) => setName((e.currentTarget as HTMLSelectElement).value)}>
            {procedures.map((p) => <option key={p.name} value={p.name}>{p.name}</option>)}
          </select>
        </label>
      )}
      {current && <RunForm key={current.name} procedure={current} />}
    </>
  );
}

function RunForm({ procedure }: { procedure: Procedure }) {
  const schema = procedure.input as JsonSchema | null;
  const fields = schema ? formFields(schema) : [];
  const [values, setValues] = useState(() => initialText(fields ?? []));
  const [raw, setRaw] = useState(fields === undefined);
  const [json, setJson] = useState(schema?.type === "object" ? "{}" : "");
  const [outcome, setOutcome] = useState<Outcome>();
  const [running, setRunning] = useState(false);

  const editAsJson = (on: boolean) => {
    if (on && fields) setJson(JSON.stringify(formValue(fields, values), null, 2));
    setRaw(on);
  };
  const run = async (event: Event) => {
    event.preventDefault();
    let input: unknown;
    if (raw) {
      try {
        input = json.trim() === "" ? undefined : JSON.parse(json);
      } catch {
        setOutcome({ ok: false, status: 0, body: undefined, message: "The input is not valid JSON" });
        return;
      }
    } else input = schema === null ? undefined : formValue(fields!, values);
    setRunning(true);
    try {
      const value = await call(procedure.name, input);
      // A stream the listing could not foresee (a plain handler returning an iterator): closed, not shown.
      if (value && typeof (value as AsyncIterator<unknown>)[Symbol.asyncIterator as never] === "function") {
        await (value as AsyncIterator<unknown>).return?.();
        setOutcome({ ok: false, status: 0, body: undefined, message: "This procedure answers with a stream of events; the runner shows single values only" });
      } else setOutcome({ ok: true, value });
    } catch (e) {
      const { code, status, message, data } = e as { code?: string; status?: number; message?: string; data?: unknown };
      setOutcome({ ok: false, status: statusOf(e), body: { code, status, message, data }, message: `${status ?? ""} ${code ?? ""}: ${messageOf(e)}`.trim() });
    } finally {
      setRunning(false);
    }
  };

  return (
    <form class="runner" onSubmit={run} aria-label={`Run ${procedure.name}`}>
      <div>
        {schema === null ? (
          <p class="note">{procedure.name} takes no input.</p>
        ) : raw ? (
          <label>
            Input (JSON)
            <textarea rows={8} value={json} onInput={(e) => setJson((e.currentTarget as HTMLTextAreaElement).value)} />
          </label>
        ) : (
          fields!.map((f) => <Field key={f.name} field={f} value={values[f.name]!} onInput={(v) => setValues({ ...values, [f.name]: v })} />)
        )}
        {fields && schema !== null && (
          <div class="field check">
            <input id="runner-raw" type="checkbox" checked={raw} onChange={(e) => editAsJson((e.currentTarget as HTMLInputElement).checked)} />
            <label for="runner-raw">Edit the input as JSON</label>
          </div>
        )}
        <div class="actions">
          <button type="submit" disabled={running}>Run</button>
        </div>
      </div>
      <div>
        {outcome?.ok === true && (
          <section aria-label="Result">
            <h2>Result</h2>
            <pre class="output">{pretty(outcome.value)}</pre>
          </section>
        )}
        {outcome?.ok === false && (
          <section aria-label="Error">
            <h2>Error</h2>
            <p role="alert" class="error">{outcome.message}</p>
            {outcome.body !== undefined && <pre class="output">{pretty(outcome.body)}</pre>}
          </section>
        )}
      </div>
    </form>
  );
}

let fieldIds = 0;

/** One input field: the label is the field's name; its type, whether it is required and its default are the description. */
function Field({ field: f, value, onInput }: { field: FormField; value: string | boolean; onInput: (value: string | boolean) => void }) {
  const [id] = useState(() => `run-${++fieldIds}`);
  const kind = f.kind === "array" ? `list of ${f.item}, one per line` : f.kind;
  const fallback = f.default === undefined ? "" : `default ${JSON.stringify(f.default)}`;
  const hint = [kind, f.required ? "required" : "optional", f.nullable ? "may be null" : "", fallback, f.description ?? ""].filter(Boolean).join(", ");
  const common = { id, name: f.name, "aria-describedby": `${id}-hint` };
  const text = (e: Event) => onInput((e.currentTarget as HTMLInputElement).value);
  let control;
  if (f.kind === "boolean" && f.required) {
    control = <input type="checkbox" {...common} checked={value === true} onChange={(e) => onInput((e.currentTarget as HTMLInputElement).checked)} />;
  } else if (f.kind === "boolean" || f.kind === "enum") {
    const choices = f.kind === "boolean" ? ["true", "false"] : f.values!;
    control = (
      <select {...common} value={String(value)} onChange={text}>
        {(!f.required || value === "") && <option value="">—</option>}
        {choices.map((v) => <option key={v} value={v}>{v}</option>)}
      </select>
    );
  } else if (f.kind === "array") {
    control = <textarea {...common} rows={3} value={String(value)} onInput={text} />;
  } else {
    const number = f.kind === "number" || f.kind === "integer";
    control = <input {...common} type={number ? "number" : "text"} step={number ? "any" : undefined} value={String(value)} onInput={text} />;
  }
  return (
    <div class={f.kind === "boolean" && f.required ? "field check" : "field"}>
      <label for={id}>{f.name}</label>
      {control}
      <small id={`${id}-hint`}>{hint}</small>
    </div>
  );
}

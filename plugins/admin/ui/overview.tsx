import { useEffect, useState } from "preact/hooks";
import { client, messageOf, type Meta } from "./api.js";
import { display } from "./values.js";

type Migration = Awaited<ReturnType<typeof client._admin.migrations>>[number];

export function Overview({ meta }: { meta: Meta }) {
  const [migrations, setMigrations] = useState<Migration[]>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    client._admin.migrations().then(setMigrations, (e) => setError(messageOf(e)));
  }, []);
  return (
    <>
      <h1>Overview</h1>
      <p>
        {meta.kind === "postgres" ? "PostgreSQL" : "SQLite"} · schema versions {meta.versions.join(", ")}
      </p>
      <section aria-labelledby="tables-h">
        <h2 id="tables-h">Tables</h2>
        <table>
          <thead><tr><th scope="col">Table</th><th scope="col">Rows</th><th scope="col">Columns</th><th scope="col">Writable</th></tr></thead>
          <tbody>
            {meta.tables.map((t) => (
              <tr key={t.name}>
                <td><a href={`#/table/${encodeURIComponent(t.name)}`}>{t.name}</a></td>
                <td class="num">{t.rows}</td>
                <td>{t.columns.length}</td>
                <td>{t.writable ? "yes" : "read-only"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <section aria-labelledby="migrations-h">
        <h2 id="migrations-h">Migrations</h2>
        {error && <p role="alert" class="error">{error}</p>}
        {migrations && (
          <table>
            <thead><tr><th scope="col">Name</th><th scope="col">Version</th><th scope="col">Applied</th></tr></thead>
            <tbody>
              {migrations.map((m) => (
                <tr key={m.name}><td>{m.name}</td><td>{m.version}</td><td>{display(m.executedAt)}</td></tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section aria-labelledby="surfaces-h">
        <h2 id="surfaces-h">Surfaces</h2>
        <ul class="chips">
          {Object.entries(meta.surfaces).map(([name, on]) => (
            <li key={name} class={on ? "chip on" : "chip"}>{name}: {on ? "on" : "off"}</li>
          ))}
        </ul>
        {meta.resources.length > 0 && (
          <table>
            <thead><tr><th scope="col">Resource</th>{["list", "get", "create", "update", "delete"].map((a) => <th scope="col" key={a}>{a}</th>)}</tr></thead>
            <tbody>
              {meta.resources.map((r) => (
                <tr key={r.name}><td>{r.name}</td>{["list", "get", "create", "update", "delete"].map((a) => <td key={a}>{r.permissions[a]}</td>)}</tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </>
  );
}

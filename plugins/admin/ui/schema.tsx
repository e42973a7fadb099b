import { useEffect, useState } from "preact/hooks";
import { client, messageOf, type Meta } from "./api.js";
import { display } from "./values.js";

type Migration = Awaited<ReturnType<typeof client._admin.migrations>>[number];
type Health = Awaited<ReturnType<typeof client._admin.health>>;
type Probe = Health["database"];

const ACTIONS = ["list", "get", "create", "update", "delete"] as const;

/** Schema and health: what is reachable, which versions ran, and each table as the app sees it. */
export function Schema({ meta }: { meta: Meta }) {
  const [health, setHealth] = useState<Health>();
  const [migrations, setMigrations] = useState<Migration[]>();
  const [error, setError] = useState<string>();
  const check = () => client._admin.health().then(setHealth, (e) => setError(messageOf(e)));
  useEffect(() => {
    void check();
    client._admin.migrations().then(setMigrations, (e) => setError(messageOf(e)));
  }, []);
  return (
    <>
      <h1>Schema and health</h1>
      {error && <p role="alert" class="error">{error}</p>}
      <section aria-labelledby="health-h">
        <div class="title">
          <h2 id="health-h">Health</h2>
          <button type="button" class="quiet" onClick={check}>Check again</button>
        </div>
        {health && (
          <ul class="chips" aria-label="Services">
            <ProbeChip name="Database" probe={health.database} />
            <ProbeChip name="Key/value store" probe={health.kv} />
            <ProbeChip name="File storage" probe={health.storage} />
          </ul>
        )}
      </section>
      <section aria-labelledby="versions-h">
        <h2 id="versions-h">Applied versions</h2>
        {migrations && (
          <div class="scroll">
            <table aria-label="applied versions">
              <thead><tr><th scope="col">Name</th><th scope="col">Version</th><th scope="col">Applied</th><th scope="col">Checksum</th><th scope="col">Drift</th></tr></thead>
              <tbody>
                {migrations.map((m) => (
                  <tr key={m.name}>
                    <td>{m.name}</td><td>{m.version}</td><td>{display(m.executedAt)}</td>
                    <td><code title={m.checksum ?? ""}>{m.checksum ? m.checksum.slice(0, 12) : "none"}</code></td>
                    <td>{m.drift === "verified" ? "matches the code" : "not recorded"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      {meta.tables.map((t) => {
        const resource = meta.resources.find((r) => r.table === t.name);
        return (
          <section key={t.name} aria-labelledby={`t-${t.name}`} class="table-card">
            <h2 id={`t-${t.name}`}>{t.name} <span class="count">{t.rows} rows{t.writable ? "" : " · read-only"}</span></h2>
            <div class="scroll">
              <table aria-label={`${t.name} columns`}>
                <thead><tr><th scope="col">Column</th><th scope="col">Type</th><th scope="col">Null</th><th scope="col">Default</th><th scope="col">References</th></tr></thead>
                <tbody>
                  {t.columns.map((c) => (
                    <tr key={c.name}>
                      <td>{c.name}{c.primaryKey ? " (key)" : ""}{c.secret ? " (secret)" : ""}</td>
                      <td>{c.type}{c.enum ? ` (${c.enum.values.join(" | ")})` : ""}</td>
                      <td>{c.nullable ? "yes" : "no"}</td>
                      <td>{c.hasDefault ? "yes" : ""}</td>
                      <td>{c.references ? `${c.references.table}.${c.references.column}` : ""}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <p class="note">
              Indexes: {t.indexes.map((i) => `${i.name} (${i.kind}: ${i.columns.join(", ")})`).join("; ") || "none"}
              {t.relations.length > 0 && <><br />Relations: {t.relations.map((r) => `${r.name}: ${r.kind} ${r.target} (${r.from} → ${r.to}${r.via ? ` via ${r.via}` : ""})`).join("; ")}</>}
              <br />
              {resource
                ? `Resource rules: ${ACTIONS.map((a) => `${a} ${resource.permissions[a]}`).join(", ")}${resource.ownerColumn ? `; owner column ${resource.ownerColumn}` : ""}`
                : "Not a resource: reachable only through your own procedures and this dashboard."}
            </p>
          </section>
        );
      })}
    </>
  );
}

function ProbeChip({ name, probe }: { name: string; probe: Probe | null }) {
  if (!probe) return <li class="chip">{name}: not configured</li>;
  return (
    <li class={probe.ok ? "chip on" : "chip down"} title={probe.error}>
      {name}: {probe.ok ? `reachable (${probe.ms} ms)` : `unreachable: ${probe.error}`}
    </li>
  );
}

import { useEffect, useState } from "preact/hooks";
import { auditAdmin, messageOf, type AuditEntrySummary } from "./api.js";
import { display } from "./values.js";

const VERBS = { insert: "Created", update: "Updated", delete: "Deleted" } as const;

/**
 * A row's history from the audit log, newest first: who changed what, each change as a diff of the
 * columns it set, and "Restore this version" (which is itself recorded).
 */
export function RowHistory({ table, rowKey, onRestored }: { table: string; rowKey: string; onRestored: () => void }) {
  const [entries, setEntries] = useState<AuditEntrySummary[]>();
  const [error, setError] = useState<string>();
  const load = async () => {
    try {
      setEntries((await auditAdmin.list({ table, key: rowKey, take: 20 })).entries);
      setError(undefined);
    } catch (e) {
      setError(messageOf(e));
    }
  };
  useEffect(() => void load(), [table, rowKey]);
  const restore = async (entry: AuditEntrySummary) => {
    try {
      await auditAdmin.restore({ id: entry.id });
      onRestored();
    } catch (e) {
      setError(messageOf(e));
    }
  };
  if (error) return <p role="alert" class="error">{error}</p>;
  if (!entries) return null;
  return (
    <section aria-label="History">
      <h3>History</h3>
      {entries.length === 0 && <p class="note">No recorded changes.</p>}
      {entries.map((entry) => (
        <article key={entry.id} aria-label={`${VERBS[entry.op]} ${entry.at}`}>
          <p>
            {VERBS[entry.op]} {new Date(entry.at).toLocaleString()} by {actorOf(entry)}
            {entry.source ? ` (${entry.source})` : ""}
          </p>
          <table>
            <thead>
              <tr><th scope="col">Column</th><th scope="col">Before</th><th scope="col">After</th></tr>
            </thead>
            <tbody>
              {entry.changed.map((column) => (
                <tr key={column}>
                  <th scope="row">{column}</th>
                  <td>{entry.before ? display(entry.before[column]) : ""}</td>
                  <td>{entry.after ? display(entry.after[column]) : ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <button type="button" onClick={() => restore(entry)}>{entry.op === "delete" ? "Undo this delete" : "Restore this version"}</button>
        </article>
      ))}
    </section>
  );
}

function actorOf(entry: AuditEntrySummary): string {
  const { kind, userId, impersonatorId } = entry.actor;
  const who = userId ?? kind;
  return impersonatorId ? `${who} (impersonated by ${impersonatorId})` : kind === "user" ? who : `${who} (${kind})`;
}

/** A user's recent changes across the audited tables (what they did, or what was done impersonating them). */
export function UserActivity({ userId }: { userId: string }) {
  const [entries, setEntries] = useState<AuditEntrySummary[]>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    auditAdmin.list({ actor: userId, take: 20 }).then((page) => setEntries(page.entries), (e: unknown) => setError(messageOf(e)));
  }, [userId]);
  if (error) return <p role="alert" class="error">{error}</p>;
  if (!entries) return null;
  return (
    <section aria-label="Activity">
      <h3>Activity</h3>
      {entries.length === 0 && <p class="note">No recorded changes.</p>}
      <ul>
        {entries.map((entry) => (
          <li key={entry.id}>
            {VERBS[entry.op]} {entry.table} {entry.key ?? ""} ({entry.changed.join(", ")}), {new Date(entry.at).toLocaleString()}
            {entry.actor.impersonatorId === userId ? " while impersonating" : ""}
          </li>
        ))}
      </ul>
    </section>
  );
}

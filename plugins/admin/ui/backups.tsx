import { useEffect, useState } from "preact/hooks";
import { client, messageOf } from "./api.js";

interface Backup {
  name: string;
  size: number;
  createdAt: Date;
}

interface Overview {
  where: string;
  kind: string;
  every: string | null;
  scheduler: "jobs" | "process" | null;
  keep: number;
  running: boolean;
  lastFailure: { at: Date; message: string } | null;
  backups: Backup[];
}

/**
 * `_admin.backups.*`, served when the app has `.backups()` (its section of `_admin`). Typed here by
 * its shape, as the mail and jobs sections are: the admin plugin does not import the backups plugin's files.
 */
const backupsAdmin = (client as unknown as {
  _admin: { backups: { list(): Promise<Overview>; take(): Promise<Backup> } };
})._admin.backups;

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function schedule(overview: Overview): string {
  if (!overview.every) return "on demand only";
  return `${overview.every} (UTC), ${overview.scheduler === "jobs" ? "through the jobs queue, once across replicas" : "by this process"}`;
}

/** A backup's bytes, streamed by the backups section's route under the dashboard's path (behind its role check). */
const bytesUrl = (backup: Backup) => `${location.pathname.replace(/\/+$/, "")}/backups/${encodeURIComponent(backup.name)}`;

/** Kept backups with their size and time, where they go and on what schedule; take one now, download one. */
export function Backups() {
  const [overview, setOverview] = useState<Overview>();
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const [busy, setBusy] = useState(false);

  const load = async () => {
    try {
      setOverview(await backupsAdmin.list());
    } catch (e) {
      setError(messageOf(e));
    }
  };
  useEffect(() => void load(), []);

  const take = async () => {
    setBusy(true);
    setError(undefined);
    setNotice(undefined);
    try {
      const backup = await backupsAdmin.take();
      setNotice(`Backup ${backup.name} taken (${size(backup.size)})`);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
      await load();
    }
  };

  return (
    <>
      <div class="title">
        <h1>Backups</h1>
        <button type="button" onClick={take} disabled={busy || overview?.running}>{busy ? "Taking a backup…" : "Back up now"}</button>
      </div>
      {error && <p role="alert" class="error">{error}</p>}
      {notice && <p role="status">{notice}</p>}
      {overview && (
        <dl aria-label="Backup settings">
          <dt>Kind</dt><dd>{overview.kind}</dd>
          <dt>Where</dt><dd>{overview.where}</dd>
          <dt>Schedule</dt><dd>{schedule(overview)}</dd>
          <dt>Kept</dt><dd>the newest {overview.keep}</dd>
          {overview.lastFailure && (
            <>
              <dt>Last failure</dt><dd class="error">{new Date(overview.lastFailure.at).toLocaleString()}: {overview.lastFailure.message}</dd>
            </>
          )}
        </dl>
      )}
      {overview && overview.backups.length === 0 && <p>No backups yet.</p>}
      {overview && overview.backups.length > 0 && (
        <table aria-label="Kept backups">
          <thead>
            <tr><th scope="col">Name</th><th scope="col">Taken</th><th scope="col">Size</th><th scope="col">Actions</th></tr>
          </thead>
          <tbody>
            {overview.backups.map((b) => (
              <tr key={b.name}>
                <td>{b.name}</td>
                <td>{new Date(b.createdAt).toLocaleString()}</td>
                <td class="num">{size(b.size)}</td>
                <td><a href={bytesUrl(b)} download={b.name} aria-label={`Download ${b.name}`}>Download</a></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

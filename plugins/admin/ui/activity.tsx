import { useEffect, useRef, useState } from "preact/hooks";
import { client, messageOf } from "./api.js";

type Entry = Awaited<ReturnType<typeof client._admin.activity>>["entries"][number];
const POLL_MS = 2_000;
const KEEP = 200;

/** The last requests of the replica that answers, newest first, polled for new ones every 2 seconds. */
export function Activity() {
  const [entries, setEntries] = useState<Entry[]>([]);
  const [capacity, setCapacity] = useState<number>();
  const [status, setStatus] = useState("");
  const [path, setPath] = useState("");
  const [live, setLive] = useState(true);
  const [error, setError] = useState<string>();
  const last = useRef<number | undefined>(undefined);

  useEffect(() => {
    last.current = undefined;
    setEntries([]);
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const filter = { status: status ? Number(status) : undefined, path: path || undefined };
    const poll = async () => {
      try {
        const page = await client._admin.activity({ ...filter, after: last.current, take: KEEP });
        if (stopped) return;
        setCapacity(page.capacity);
        if (page.entries.length) {
          last.current = page.entries[0]!.seq;
          setEntries((old) => [...page.entries, ...old].slice(0, KEEP));
        }
        setError(undefined);
      } catch (e) {
        if (!stopped) setError(messageOf(e));
      }
      if (!stopped && live) timer = setTimeout(poll, POLL_MS);
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [status, path, live]);

  const submit = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setStatus(String(form.get("status") ?? ""));
    setPath(String(form.get("path") ?? "").trim());
  };
  const errors = entries.filter((e) => e.error);

  return (
    <>
      <h1>Activity</h1>
      <p class="note">
        The last {capacity ?? "…"} requests of the replica that answers, kept in its memory only: another replica has its own, and a
        restart empties it. {live ? "Updates every 2 seconds." : "Paused."}
      </p>
      <form class="filter" onSubmit={submit} aria-label="Filter requests">
        <label>
          Status
          <select name="status">
            <option value="">any</option>
            <option value="2">2xx</option>
            <option value="3">3xx</option>
            <option value="4">4xx</option>
            <option value="5">5xx</option>
          </select>
        </label>
        <label>Path contains<input name="path" /></label>
        <button type="submit">Apply</button>
        <button type="button" class="quiet" aria-pressed={!live} onClick={() => setLive(!live)}>{live ? "Pause" : "Resume"}</button>
      </form>
      {error && <p role="alert" class="error">{error}</p>}
      {errors.length > 0 && (
        <section aria-labelledby="errors-h">
          <h2 id="errors-h">Unexpected errors</h2>
          <ul class="plain">
            {errors.map((e) => <li key={e.seq}><code>{e.requestId}</code> {e.method} {e.path}: {e.error}</li>)}
          </ul>
        </section>
      )}
      <div class="scroll">
        <table aria-label="requests">
          <thead>
            <tr><th scope="col">Time</th><th scope="col">Method</th><th scope="col">Path</th><th scope="col">Status</th><th scope="col">ms</th><th scope="col">User</th><th scope="col">Request id</th></tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <tr key={e.seq} class={e.status >= 500 ? "failed" : undefined}>
                <td>{new Date(e.at).toLocaleTimeString()}</td>
                <td>{e.method}</td>
                <td>{e.path}</td>
                <td class="num">{e.status}</td>
                <td class="num">{e.ms}</td>
                <td>{e.userId ?? ""}</td>
                <td><code>{e.requestId}</code></td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p role="status" class="note">{entries.length === 0 ? "No requests yet" : `${entries.length} requests shown`}</p>
    </>
  );
}

import { useEffect, useState } from "preact/hooks";
import { client, messageOf, signOut, statusOf, type Meta } from "./api.js";
import { SignIn } from "./sign-in.js";
import { Overview } from "./overview.js";
import { Browse } from "./browse.js";
import { MailView } from "./mail.js";
import { Jobs } from "./jobs.js";

type State = { kind: "loading" } | { kind: "signed-out" } | { kind: "forbidden"; message: string } | { kind: "failed"; message: string } | { kind: "ready"; meta: Meta };

/** The table in the address (`#/table/post`), so a reload or a shared link opens the same view. */
function tableInHash(): string | undefined {
  const match = /^#\/table\/([^/]+)$/.exec(location.hash);
  return match ? decodeURIComponent(match[1]!) : undefined;
}

export function App() {
  const [state, setState] = useState<State>({ kind: "loading" });
  const [table, setTable] = useState<string | undefined>(tableInHash());
  const [mailInHash, setMailInHash] = useState(location.hash === "#/mail");
  const [jobsInHash, setJobsInHash] = useState(location.hash === "#/jobs");

  const load = async () => {
    try {
      setState({ kind: "ready", meta: await client._admin.meta() });
    } catch (error) {
      const status = statusOf(error);
      if (status === 401) setState({ kind: "signed-out" });
      else if (status === 403) setState({ kind: "forbidden", message: messageOf(error) });
      else setState({ kind: "failed", message: messageOf(error) });
    }
  };

  useEffect(() => {
    void load();
    const onHash = () => {
      setTable(tableInHash());
      setMailInHash(location.hash === "#/mail");
      setJobsInHash(location.hash === "#/jobs");
    };
    addEventListener("hashchange", onHash);
    return () => removeEventListener("hashchange", onHash);
  }, []);

  const leave = async () => {
    await signOut();
    setState({ kind: "signed-out" });
  };

  if (state.kind === "loading") return <main class="center"><p>Loading…</p></main>;
  if (state.kind === "signed-out") return <SignIn onSignedIn={load} />;
  if (state.kind === "forbidden") {
    return (
      <main class="center">
        <section class="card" aria-labelledby="denied">
          <h1 id="denied">Not allowed</h1>
          <p>You are signed in, but your account has no admin role. {state.message}.</p>
          <button type="button" onClick={leave}>Sign out</button>
        </section>
      </main>
    );
  }
  if (state.kind === "failed") {
    return (
      <main class="center">
        <section class="card" role="alert">
          <h1>The admin API failed</h1>
          <p>{state.message}</p>
          <button type="button" onClick={load}>Try again</button>
        </section>
      </main>
    );
  }
  const { meta } = state;
  const current = meta.tables.find((t) => t.name === table);
  const mail = meta.plugins.includes("mail");
  const mailOpen = mail && mailInHash;
  // `_admin.jobs.*` exists only on apps with `.jobs()`.
  const jobs = meta.plugins.includes("jobs");
  const jobsOpen = jobs && jobsInHash;
  return (
    <div class="layout">
      <header class="top">
        <a href="#/" class="brand">{meta.name} · admin</a>
        <button type="button" class="quiet" onClick={leave}>Sign out</button>
      </header>
      <nav aria-label="Tables" class="side">
        <a href="#/" aria-current={current || mailOpen || jobsOpen ? undefined : "page"}>Overview</a>
        {mail && <a href="#/mail" aria-current={mailOpen ? "page" : undefined}>Mail</a>}
        {jobs && <a href="#/jobs" aria-current={jobsOpen ? "page" : undefined}>Jobs</a>}
        <h2>Tables</h2>
        <ul>
          {meta.tables.map((t) => (
            <li key={t.name}>
              <a href={`#/table/${encodeURIComponent(t.name)}`} aria-current={t.name === table ? "page" : undefined}>
                <span>{t.name}</span> <span class="count" aria-label={`${t.rows} rows`}>{t.rows}</span>
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main class="content">
        {current ? <Browse key={current.name} table={current} mail={mail} onChanged={load} /> : mailOpen ? <MailView /> : jobsOpen ? <Jobs /> : <Overview meta={meta} />}
      </main>
    </div>
  );
}

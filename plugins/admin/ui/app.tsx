import { useEffect, useState } from "preact/hooks";
import { client, messageOf, signOut, statusOf, type Meta } from "./api.js";
import { SignIn } from "./sign-in.js";
import { Overview } from "./overview.js";
import { Browse } from "./browse.js";
import { Users } from "./users.js";
import { Schema } from "./schema.js";
import { Activity } from "./activity.js";
import { MailView } from "./mail.js";
import { Jobs } from "./jobs.js";
import { Files } from "./files.js";
import { Backups } from "./backups.js";
import { Channels } from "./channels.js";
import { Runner } from "./runner.js";
import { Organizations } from "./organizations.js";
import { SsoView } from "./sso.js";

type State = { kind: "loading" } | { kind: "signed-out" } | { kind: "forbidden"; message: string } | { kind: "failed"; message: string } | { kind: "ready"; meta: Meta };

/** The table in the address (`#/table/post`), so a reload or a shared link opens the same view. */
function tableInHash(): string | undefined {
  const match = /^#\/table\/([^/]+)$/.exec(location.hash);
  return match ? decodeURIComponent(match[1]!) : undefined;
}

/** The other views, each at its own address. */
const VIEWS = [
  { hash: "#/users", label: "Users", plugin: undefined },
  // Shown only when the app has organizations (`.auth({ organizations: true })` on the schema).
  { hash: "#/organizations", label: "Organizations", plugin: undefined, section: "organizations" },
  { hash: "#/schema", label: "Schema and health", plugin: undefined },
  { hash: "#/activity", label: "Activity", plugin: undefined },
  { hash: "#/procedures", label: "Procedures", plugin: undefined },
  // Shown only when the app has `.mail()` / `.jobs()` / `.files()` / `.backups()` / `.channels()` (their `_admin.*` sections exist only then).
  { hash: "#/mail", label: "Mail", plugin: "mail" },
  { hash: "#/jobs", label: "Jobs", plugin: "jobs" },
  { hash: "#/files", label: "Files", plugin: "files" },
  { hash: "#/backups", label: "Backups", plugin: "backups" },
  { hash: "#/channels", label: "Channels", plugin: "channels" },
  // Shown only when the schema declares single sign-on (`.auth({ sso: true })`).
  { hash: "#/sso", label: "Single sign-on", plugin: "auth", table: "ssoProvider" },
] as const;

const viewInHash = () => VIEWS.find((v) => v.hash === location.hash)?.hash;

export function App() {
  const [state, setState] = useState<State>({ kind: "loading" });
  const [table, setTable] = useState<string | undefined>(tableInHash());
  const [view, setView] = useState<string | undefined>(viewInHash());

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
      setView(viewInHash());
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
  const jobs = meta.plugins.includes("jobs");
  const organizations = meta.sections.includes("organizations");
  return (
    <div class="layout">
      <header class="top">
        <a href="#/" class="brand">{meta.name} · admin</a>
        <button type="button" class="quiet" onClick={leave}>Sign out</button>
      </header>
      <nav aria-label="Tables" class="side">
        <a href="#/" aria-current={current || view ? undefined : "page"}>Overview</a>
        {VIEWS.filter((v) => (!v.plugin || meta.plugins.includes(v.plugin)) && (!("table" in v) || meta.tables.some((t) => t.name === v.table)) && (!("section" in v) || meta.sections.includes(v.section))).map((v) => (
          <a key={v.hash} href={v.hash} aria-current={view === v.hash ? "page" : undefined}>{v.label}</a>
        ))}
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
        {view === "#/users" ? (
          <Users passwordReset={mail} audit={meta.plugins.includes("audit")} organizations={organizations} />
        ) : view === "#/organizations" && organizations ? (
          <Organizations />
        ) : view === "#/activity" ? (
          <Activity />
        ) : view === "#/schema" ? (
          <Schema meta={meta} />
        ) : view === "#/procedures" ? (
          <Runner />
        ) : view === "#/mail" && mail ? (
          <MailView />
        ) : view === "#/jobs" && jobs ? (
          <Jobs />
        ) : view === "#/files" && meta.plugins.includes("files") ? (
          <Files />
        ) : view === "#/backups" && meta.plugins.includes("backups") ? (
          <Backups />
        ) : view === "#/sso" && meta.tables.some((t) => t.name === "ssoProvider") ? (
          <SsoView />
        ) : view === "#/channels" && meta.plugins.includes("channels") ? (
          <Channels />
        ) : current ? (
          <Browse
            key={current.name}
            table={current}
            mail={mail}
            audit={meta.plugins.includes("audit")}
            tenant={organizations ? meta.resources.find((r) => r.table === current.name && r.tenant)?.tenant ?? undefined : undefined}
            onChanged={load}
          />
        ) : (
          <Overview meta={meta} />
        )}
      </main>
    </div>
  );
}

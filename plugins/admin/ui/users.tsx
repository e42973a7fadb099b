import { useEffect, useState } from "preact/hooks";
import { client, messageOf } from "./api.js";
import { display } from "./values.js";
import { UserPanel } from "./user-panel.js";
import { usePanel } from "./panel.js";

type Page = Awaited<ReturnType<typeof client._admin.users.list>> & { skip: number };
const PAGE = 25;

/** Users: search by email or name, open one in the side panel, or create one. */
export function Users({ passwordReset, audit = false, organizations = false }: { passwordReset: boolean; audit?: boolean; organizations?: boolean }) {
  const [search, setSearch] = useState("");
  const [skip, setSkip] = useState(0);
  const [page, setPage] = useState<Page>();
  const [error, setError] = useState<string>();
  const [open, setOpen] = useState<string | "new">();

  const load = async () => {
    try {
      setPage({ ...(await client._admin.users.list({ search: search || undefined, take: PAGE, skip })), skip });
      setError(undefined);
    } catch (e) {
      setError(messageOf(e));
    }
  };
  useEffect(() => void load(), [search, skip]);

  const submit = (event: Event) => {
    event.preventDefault();
    setSkip(0);
    setSearch(String(new FormData(event.currentTarget as HTMLFormElement).get("search") ?? "").trim());
  };

  return (
    <>
      <div class="title">
        <h1>Users</h1>
        <button type="button" onClick={() => setOpen("new")}>New user</button>
      </div>
      <form class="filter" role="search" onSubmit={submit} aria-label="Search users">
        <label>
          Email or name
          <input name="search" type="search" defaultValue={search} />
        </label>
        <button type="submit">Search</button>
      </form>
      {error && <p role="alert" class="error">{error}</p>}
      {page && (
        <>
          <div class="scroll">
            <table aria-label="users">
              <thead>
                <tr><th scope="col">Email</th><th scope="col">Name</th><th scope="col">Roles</th><th scope="col">State</th><th scope="col">Created</th></tr>
              </thead>
              <tbody>
                {page.data.map((u) => (
                  <tr key={u.id}>
                    <td><button type="button" class="link" onClick={() => setOpen(u.id)}>{u.email}</button></td>
                    <td>{u.name}</td>
                    <td>{u.roles.join(", ")}</td>
                    <td>{u.banned ? <span class="badge bad">banned</span> : "active"}</td>
                    <td>{display(u.createdAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div class="pager">
            <span role="status">{page.count === 0 ? "No users" : `Users ${page.skip + 1}–${Math.min(page.skip + PAGE, page.count)} of ${page.count}`}</span>
            <button type="button" disabled={skip === 0} onClick={() => setSkip(Math.max(0, skip - PAGE))}>Previous page</button>
            <button type="button" disabled={skip + PAGE >= page.count} onClick={() => setSkip(skip + PAGE)}>Next page</button>
          </div>
        </>
      )}
      {open === "new" && <NewUser onClose={() => setOpen(undefined)} onCreated={(id) => (setOpen(id), void load())} />}
      {open && open !== "new" && <UserPanel key={open} id={open} passwordReset={passwordReset} audit={audit} organizations={organizations} onClose={() => setOpen(undefined)} onChanged={load} />}
    </>
  );
}

function NewUser({ onClose, onCreated }: { onClose: () => void; onCreated: (id: string) => void }) {
  const [error, setError] = useState<string>();
  const panel = usePanel(onClose);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const text = (name: string) => String(form.get(name) ?? "").trim();
    try {
      const roles = text("roles").split(",").map((r) => r.trim()).filter(Boolean);
      const user = await client._admin.users.create({ email: text("email"), name: text("name"), password: text("password") || undefined, roles });
      onCreated(user.id);
    } catch (e) {
      setError(messageOf(e));
    }
  };
  return (
    <aside class="panel" aria-label="New user" ref={panel}>
      <form onSubmit={submit}>
        <div class="title">
          <h2>New user</h2>
          <button type="button" class="quiet" onClick={onClose}>Close</button>
        </div>
        <label>Email<input name="email" type="email" required /></label>
        <label>Name<input name="name" required /></label>
        <label>Password<input name="password" type="password" autoComplete="new-password" minLength={8} aria-describedby="pw-hint" /></label>
        <small id="pw-hint" class="note">Optional: without one the person signs in another way (a reset, a social account).</small>
        <label>Roles<input name="roles" placeholder="user" aria-describedby="roles-hint" /></label>
        <small id="roles-hint" class="note">Comma-separated; empty gives the default role.</small>
        {error && <p role="alert" class="error">{error}</p>}
        <div class="actions"><button type="submit">Create user</button></div>
      </form>
    </aside>
  );
}

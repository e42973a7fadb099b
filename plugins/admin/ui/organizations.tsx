import { useEffect, useState } from "preact/hooks";
import { messageOf, organizationsAdmin, type AdminOrganization, type AdminOrganizationDetail } from "./api.js";
import { display } from "./values.js";
import { usePanel, usePanelActions } from "./panel.js";

const PAGE = 25;

/** Organizations: every one with its member and pending invitation counts; one opens in the side panel. */
export function Organizations() {
  const [skip, setSkip] = useState(0);
  const [page, setPage] = useState<{ data: AdminOrganization[]; count: number; skip: number }>();
  const [error, setError] = useState<string>();
  const [open, setOpen] = useState<string>();

  const load = async () => {
    try {
      setPage({ ...(await organizationsAdmin.list({ take: PAGE, skip })), skip });
      setError(undefined);
    } catch (e) {
      setError(messageOf(e));
    }
  };
  useEffect(() => void load(), [skip]);

  return (
    <>
      <div class="title">
        <h1>Organizations</h1>
        <button type="button" onClick={load}>Refresh</button>
      </div>
      {error && <p role="alert" class="error">{error}</p>}
      {page && (
        <>
          <div class="scroll">
            <table aria-label="organizations">
              <thead>
                <tr><th scope="col">Name</th><th scope="col">Slug</th><th scope="col">Members</th><th scope="col">Pending invitations</th><th scope="col">Created</th></tr>
              </thead>
              <tbody>
                {page.data.map((org) => (
                  <tr key={org.id}>
                    <td><button type="button" class="link" onClick={() => setOpen(org.id)}>{org.name}</button></td>
                    <td>{org.slug}</td>
                    <td class="num">{org.members}</td>
                    <td class="num">{org.invitations}</td>
                    <td>{display(org.createdAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div class="pager">
            <span role="status">{page.count === 0 ? "No organizations" : `Organizations ${page.skip + 1}–${Math.min(page.skip + PAGE, page.count)} of ${page.count}`}</span>
            <button type="button" disabled={skip === 0} onClick={() => setSkip(Math.max(0, skip - PAGE))}>Previous page</button>
            <button type="button" disabled={skip + PAGE >= page.count} onClick={() => setSkip(skip + PAGE)}>Next page</button>
          </div>
        </>
      )}
      {open && <OrganizationPanel key={open} id={open} onClose={() => setOpen(undefined)} onChanged={load} />}
    </>
  );
}

/** One organization: its members and their roles (changed or removed here), its pending invitations (cancelled here), and its deletion. */
function OrganizationPanel({ id, onClose, onChanged }: { id: string; onClose: () => void; onChanged: () => void }) {
  const [org, setOrg] = useState<AdminOrganizationDetail>();
  const { error, setError, notice, act } = usePanelActions(() => load(), onChanged);
  const [confirming, setConfirming] = useState(false);
  const panel = usePanel(onClose);

  const load = async () => {
    try {
      setOrg(await organizationsAdmin.get({ id }));
    } catch (e) {
      setError(messageOf(e));
    }
  };
  useEffect(() => void load(), [id]);

  const remove = async () => {
    try {
      await organizationsAdmin.delete({ id });
      onChanged();
      onClose();
    } catch (e) {
      setConfirming(false);
      setError(messageOf(e));
    }
  };
  const rolesIn = (event: Event) => String(new FormData(event.currentTarget as HTMLFormElement).get("roles") ?? "").split(",").map((r) => r.trim()).filter(Boolean);

  return (
    <aside class="panel" aria-label={org ? `Organization ${org.name}` : "Organization"} ref={panel}>
      <div class="title">
        <h2>{org?.name ?? "Organization"}</h2>
        <button type="button" class="quiet" onClick={onClose}>Close</button>
      </div>
      {error && <p role="alert" class="error">{error}</p>}
      {notice && <p role="status" class="note">{notice}</p>}
      {org && (
        <>
          <dl class="facts">
            <dt>Slug</dt><dd>{org.slug}</dd>
            <dt>Id</dt><dd>{org.id}</dd>
            <dt>Created</dt><dd>{display(org.createdAt)}</dd>
          </dl>

          <h3>Members</h3>
          {org.memberList.length === 0 ? <p class="note">No members.</p> : (
            <ul class="plain" aria-label="members">
              {org.memberList.map((m) => (
                <li key={m.id}>
                  <strong>{m.email}</strong> {m.name && m.name !== m.email ? `(${m.name})` : ""}
                  <form class="inline" aria-label={`Roles of ${m.email}`} onSubmit={(e) => act(() => organizationsAdmin.setRoles({ memberId: m.id, roles: rolesIn(e) }), `Roles of ${m.email} saved`)(e)}>
                    <label>Roles<input name="roles" defaultValue={m.roles.join(", ")} key={m.roles.join()} /></label>
                    <button type="submit">Save roles</button>
                    <button type="button" class="danger" aria-label={`Remove ${m.email}`} onClick={act(() => organizationsAdmin.removeMember({ memberId: m.id }), `${m.email} removed`)}>Remove</button>
                  </form>
                </li>
              ))}
            </ul>
          )}

          <h3>Pending invitations</h3>
          {org.pendingInvitations.length === 0 ? <p class="note">No pending invitations.</p> : (
            <table aria-label="pending invitations">
              <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Expires</th><th scope="col"><span class="sr">Action</span></th></tr></thead>
              <tbody>
                {org.pendingInvitations.map((i) => (
                  <tr key={i.id}>
                    <td title={i.inviterEmail ? `invited by ${i.inviterEmail}` : undefined}>{i.email}</td>
                    <td>{i.role ?? ""}</td>
                    <td>{display(i.expiresAt)}</td>
                    <td><button type="button" class="quiet" aria-label={`Cancel the invitation of ${i.email}`} onClick={act(() => organizationsAdmin.cancelInvitation({ id: i.id }), `Invitation of ${i.email} cancelled`)}>Cancel</button></td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}

          <h3>Delete</h3>
          <p class="note">Deletes its members and invitations, and its rows in tables whose reference to it cascades (otherwise the delete is refused).</p>
          {confirming ? (
            <div class="actions">
              <button type="button" class="danger" onClick={remove}>Confirm delete of {org.name}</button>
              <button type="button" class="quiet" onClick={() => setConfirming(false)}>Keep it</button>
            </div>
          ) : (
            <button type="button" class="danger" onClick={() => setConfirming(true)}>Delete organization</button>
          )}
        </>
      )}
    </aside>
  );
}

import { useEffect, useState } from "preact/hooks";
import { client, mailAdmin, messageOf, organizationsAdmin, type AdminMembership } from "./api.js";
import { age, display } from "./values.js";
import { usePanel, usePanelActions } from "./panel.js";
import { UserActivity } from "./row-history.js";

type Detail = Awaited<ReturnType<typeof client._admin.users.get>>;


/** One user: who they are, their sessions, keys and accounts, and the actions on them. */
export function UserPanel({ id, passwordReset, audit = false, organizations = false, onClose, onChanged }: { id: string; passwordReset: boolean; audit?: boolean; organizations?: boolean; onClose: () => void; onChanged: () => void }) {
  const [user, setUser] = useState<Detail>();
  const [memberships, setMemberships] = useState<AdminMembership[]>();
  const { error, setError, notice, act } = usePanelActions(() => load(), onChanged);
  const panel = usePanel(onClose);

  const load = async () => {
    try {
      setUser(await client._admin.users.get({ id }));
      if (organizations) setMemberships(await organizationsAdmin.memberships({ userId: id }));
    } catch (e) {
      setError(messageOf(e));
    }
  };
  useEffect(() => void load(), [id]);

  const field = (event: Event, name: string) => String(new FormData(event.currentTarget as HTMLFormElement).get(name) ?? "").trim();

  return (
    <aside class="panel" aria-label={user ? `User ${user.email}` : "User"} ref={panel}>
      <div class="title">
        <h2>{user?.email ?? "User"}</h2>
        <button type="button" class="quiet" onClick={onClose}>Close</button>
      </div>
      {error && <p role="alert" class="error">{error}</p>}
      {notice && <p role="status" class="note">{notice}</p>}
      {user && (
        <>
          <dl class="facts">
            <dt>Name</dt><dd>{user.name}</dd>
            <dt>Id</dt><dd>{user.id}</dd>
            <dt>Email verified</dt><dd>{user.emailVerified ? "yes" : "no"}</dd>
            <dt>Created</dt><dd>{display(user.createdAt)}</dd>
            <dt>State</dt>
            <dd>{user.banned ? `banned: ${user.banReason ?? ""}${user.banExpires ? ` (until ${display(user.banExpires)})` : " (no end)"}` : "active"}</dd>
          </dl>

          <form class="inline" onSubmit={(e) => act(() => client._admin.users.setRoles({ id, roles: field(e, "roles").split(",").map((r) => r.trim()).filter(Boolean) }), "Roles saved")(e)}>
            <label>Roles<input name="roles" defaultValue={user.roles.join(", ")} key={user.roles.join()} /></label>
            <button type="submit">Save roles</button>
          </form>

          {user.banned ? (
            <button type="button" onClick={act(() => client._admin.users.unban({ id }), "Unbanned")}>Unban</button>
          ) : (
            <form class="inline" aria-label="Ban" onSubmit={(e) => {
              const until = field(e, "until");
              return act(() => client._admin.users.ban({ id, reason: field(e, "reason") || undefined, expiresAt: until ? new Date(until) : undefined }), "Banned; their sessions are ended")(e);
            }}>
              <label>Ban reason<input name="reason" /></label>
              <label>Ban until<input name="until" type="datetime-local" aria-describedby="until-hint" /></label>
              <small id="until-hint" class="note">Empty: no end.</small>
              <button type="submit" class="danger">Ban</button>
            </form>
          )}
          {/* HOOK (mail): the mail plugin's `_admin.mail.sendPasswordReset`, shown only when the app has `.mail()`. */}
          {passwordReset && (
            <button type="button" onClick={act(() => mailAdmin.sendPasswordReset({ userId: id }), "Password reset sent")}>Send a password reset</button>
          )}

          <h3>Sessions</h3>
          {user.sessions.length === 0 ? <p class="note">No sessions.</p> : (
            <table aria-label="sessions">
              <thead><tr><th scope="col">Client address</th><th scope="col">Age</th><th scope="col">Agent</th><th scope="col"><span class="sr">Action</span></th></tr></thead>
              <tbody>
                {user.sessions.map((s) => (
                  <tr key={s.id}>
                    <td>{s.ipAddress ?? "unknown"}</td>
                    <td title={display(s.createdAt)}>{age(s.createdAt)}</td>
                    <td title={s.userAgent ?? ""}>{s.userAgent ?? ""}</td>
                    <td><button type="button" class="quiet" aria-label={`Revoke session from ${s.ipAddress ?? "unknown"}, ${age(s.createdAt)}`} onClick={act(() => client._admin.users.revokeSession({ id: s.id }), "Session revoked")}>Revoke</button></td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {user.sessions.length > 0 && (
            <button type="button" class="danger" onClick={act(() => client._admin.users.revokeSessions({ id }), "Every session revoked")}>Revoke all sessions</button>
          )}

          {user.apiKeys && (
            <>
              <h3>API keys</h3>
              {user.apiKeys.length === 0 ? <p class="note">No API keys.</p> : (
                <ul class="plain">
                  {user.apiKeys.map((k) => (
                    <li key={k.id}>
                      {k.name ?? "(unnamed)"} <code>{k.start ?? k.prefix ?? ""}…</code> {k.enabled ? "" : "(disabled)"} created {age(k.createdAt)}
                      {" "}<button type="button" class="quiet" aria-label={`Revoke API key ${k.name ?? k.id}`} onClick={act(() => client._admin.users.revokeApiKey({ id: k.id }), "API key revoked")}>Revoke</button>
                    </li>
                  ))}
                </ul>
              )}
            </>
          )}

          {memberships && (
            <>
              <h3>Organizations</h3>
              {memberships.length === 0 ? <p class="note">Not a member of any organization.</p> : (
                <ul class="plain" aria-label="memberships">
                  {memberships.map((m) => <li key={m.memberId}>{m.organization} <span class="note">({m.slug})</span>: {m.roles.join(", ")}</li>)}
                </ul>
              )}
            </>
          )}

          <h3>Accounts</h3>
          <ul class="plain">
            {user.accounts.map((a) => <li key={a.id}>{a.providerId}{a.hasPassword ? " (password set)" : ""}, linked {age(a.createdAt)}</li>)}
          </ul>

          {user.twoFactor && (
            <>
              <h3>Two-factor</h3>
              <p class="note">{user.twoFactor.enabled ? "On: sign-in asks for a code after the password." : "Off."}</p>
              {user.twoFactor.enabled && (
                <button type="button" class="danger" onClick={act(() => client._admin.users.resetTwoFactor({ id }), "Two-factor reset: the next sign-in asks only the password")}>Reset two-factor</button>
              )}
            </>
          )}

          {user.passkeys && (
            <>
              <h3>Passkeys</h3>
              {user.passkeys.length === 0 ? <p class="note">No passkeys.</p> : (
                <ul class="plain" aria-label="passkeys">
                  {user.passkeys.map((p) => (
                    <li key={p.id}>
                      {p.name ?? "(unnamed)"} ({p.backedUp ? "synced" : "one device"}){p.createdAt ? `, added ${age(p.createdAt)}` : ""}
                      {" "}<button type="button" class="quiet" aria-label={`Delete passkey ${p.name ?? p.id}`} onClick={act(() => client._admin.users.deletePasskey({ id: p.id }), "Passkey deleted")}>Delete</button>
                    </li>
                  ))}
                </ul>
              )}
            </>
          )}
        </>
      )}
      {audit && <UserActivity userId={id} />}
    </aside>
  );
}

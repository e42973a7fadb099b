import { useEffect, useState } from "preact/hooks";
import { client, messageOf } from "./api.js";

type Provider = Awaited<ReturnType<typeof client._admin.sso.list>>[number];

/** Single sign-on providers (`schema().auth({ sso: true })`): every one, a form to register one, and delete. */
export function SsoView() {
  const [providers, setProviders] = useState<Provider[]>();
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const [confirming, setConfirming] = useState<string>();
  const load = () => client._admin.sso.list().then(setProviders, (e) => setError(messageOf(e)));
  useEffect(() => void load(), []);

  const run = async (what: () => Promise<unknown>, done: string) => {
    try {
      await what();
      setError(undefined);
      setNotice(done);
      await load();
    } catch (e) {
      setNotice(undefined);
      setError(messageOf(e));
    }
  };
  const register = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const field = (name: string) => String(new FormData(form).get(name) ?? "").trim();
    const providerId = field("providerId");
    void run(async () => {
      await client._admin.sso.register({ providerId, issuer: field("issuer"), domain: field("domain"), clientId: field("clientId"), clientSecret: field("clientSecret") });
      form.reset();
    }, `Provider ${providerId} registered`);
  };

  return (
    <>
      <div class="title">
        <h1>Single sign-on</h1>
      </div>
      {error && <p role="alert" class="error">{error}</p>}
      {notice && <p role="status" class="note">{notice}</p>}
      {providers && providers.length === 0 && <p>No providers yet.</p>}
      {providers && providers.length > 0 && (
        <div class="scroll">
          <table aria-label="Single sign-on providers">
            <thead>
              <tr><th scope="col">Provider</th><th scope="col">Email domain</th><th scope="col">Issuer</th><th scope="col">Client</th><th scope="col">Registered by</th><th scope="col">Callback URL</th><th scope="col"><span class="sr">Action</span></th></tr>
            </thead>
            <tbody>
              {providers.map((p) => (
                <tr key={p.providerId}>
                  <td>{p.providerId} ({p.type.toUpperCase()})</td>
                  <td>{p.domain}{p.domainVerified ? " (verified)" : ""}</td>
                  <td>{p.issuer}</td>
                  <td>{p.clientIdEnd ? <code>…{p.clientIdEnd}</code> : ""}</td>
                  <td>{p.registeredBy?.email ?? ""}</td>
                  <td><code>{p.callbackUrl}</code></td>
                  <td>
                    {/* One button that asks again, as files do: Escape or leaving it takes the question back. */}
                    <button
                      type="button"
                      class="danger"
                      aria-label={confirming === p.providerId ? `Confirm delete ${p.providerId}` : `Delete ${p.providerId}`}
                      onClick={() => (confirming === p.providerId ? void run(() => client._admin.sso.delete({ providerId: p.providerId }), `Provider ${p.providerId} deleted`) : setConfirming(p.providerId))}
                      onKeyDown={(e) => e.key === "Escape" && setConfirming(undefined)}
                      onBlur={() => confirming === p.providerId && setConfirming(undefined)}
                    >
                      {confirming === p.providerId ? "Confirm delete" : "Delete"}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h2>Register an OpenID Connect provider</h2>
      <p class="note">At the provider, set the redirect URL to <code>{location.origin}/api/auth/sso/callback/</code> followed by the provider id.</p>
      <form class="inline" aria-label="Register a provider" onSubmit={register}>
        <label>Provider id<input name="providerId" required pattern="[A-Za-z0-9_\-]+" /></label>
        <label>Issuer URL<input name="issuer" type="url" required /></label>
        <label>Email domain<input name="domain" required /></label>
        <label>Client id<input name="clientId" required /></label>
        <label>Client secret<input name="clientSecret" type="password" required autocomplete="off" /></label>
        <button type="submit">Register</button>
      </form>
    </>
  );
}

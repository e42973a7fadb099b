import { useState } from "preact/hooks";
import { TWO_FACTOR, signIn, verifyCode } from "./api.js";

export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  // After a right password on an account with two-factor on: the code step, no session yet.
  const [codeStep, setCodeStep] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    const outcome = codeStep
      ? await verifyCode(String(form.get("code")).trim()).catch((e: Error) => e.message)
      : await signIn(String(form.get("email")), String(form.get("password"))).catch((e: Error) => e.message);
    setBusy(false);
    if (outcome === TWO_FACTOR) {
      setError(undefined);
      setCodeStep(true);
    } else if (outcome) setError(outcome);
    else onSignedIn();
  };
  return (
    <main class="center">
      <form class="card" onSubmit={submit} aria-labelledby="sign-in">
        <h1 id="sign-in">Sign in</h1>
        {codeStep ? (
          <label>
            Two-factor code
            <input name="code" autoComplete="one-time-code" inputMode="numeric" required aria-describedby="code-hint" />
            <small id="code-hint" class="note">From your authenticator app, or one of your backup codes.</small>
          </label>
        ) : (
          <>
            <label>
              Email
              <input name="email" type="email" autoComplete="username" required />
            </label>
            <label>
              Password
              <input name="password" type="password" autoComplete="current-password" required />
            </label>
          </>
        )}
        {error && <p role="alert" class="error">{error}</p>}
        <button type="submit" disabled={busy}>{codeStep ? "Verify" : "Sign in"}</button>
        {/* The auth pages' sign-in, when the app serves them: providers and passkeys, back to here. */}
        {!codeStep && document.body.dataset.signIn && <p><a href={document.body.dataset.signIn}>Other ways to sign in</a></p>}
      </form>
    </main>
  );
}

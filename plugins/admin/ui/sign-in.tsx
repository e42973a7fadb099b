import { useState } from "preact/hooks";
import { signIn } from "./api.js";

export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    const failure = await signIn(String(form.get("email")), String(form.get("password"))).catch((e: Error) => e.message);
    setBusy(false);
    if (failure) setError(failure);
    else onSignedIn();
  };
  return (
    <main class="center">
      <form class="card" onSubmit={submit} aria-labelledby="sign-in">
        <h1 id="sign-in">Sign in</h1>
        <label>
          Email
          <input name="email" type="email" autoComplete="username" required />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="current-password" required />
        </label>
        {error && <p role="alert" class="error">{error}</p>}
        <button type="submit" disabled={busy}>Sign in</button>
      </form>
    </main>
  );
}

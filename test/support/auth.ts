type Handler = { handle(request: Request): Promise<Response> };

export const ORIGIN = "http://localhost:3000";

export interface SignedIn {
  cookie: string;
  userId: string;
  email: string;
}

/** The `name=value` pairs of every Set-Cookie header, joined as a Cookie header. */
export function cookieOf(response: Response): string {
  return response.headers
    .getSetCookie()
    .map((line) => line.split(";")[0])
    .join("; ");
}

/** Signs a user up with email and password through `/api/auth/**`, as a browser would. */
export async function signUp(app: Handler, email: string, password = "correct-horse-battery-staple"): Promise<SignedIn> {
  const response = await app.handle(
    new Request(`${ORIGIN}/api/auth/sign-up/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: ORIGIN },
      body: JSON.stringify({ email, password, name: email.split("@")[0] }),
    }),
  );
  if (response.status !== 200) throw new Error(`sign-up failed: ${response.status} ${await response.text()}`);
  const body = (await response.json()) as { user: { id: string } };
  return { cookie: cookieOf(response), userId: body.user.id, email };
}

export async function signIn(app: Handler, email: string, password = "correct-horse-battery-staple"): Promise<SignedIn> {
  const response = await app.handle(
    new Request(`${ORIGIN}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: ORIGIN },
      body: JSON.stringify({ email, password }),
    }),
  );
  if (response.status !== 200) throw new Error(`sign-in failed: ${response.status} ${await response.text()}`);
  const body = (await response.json()) as { user: { id: string } };
  return { cookie: cookieOf(response), userId: body.user.id, email };
}

export async function signOut(app: Handler, cookie: string): Promise<number> {
  const response = await app.handle(
    new Request(`${ORIGIN}/api/auth/sign-out`, { method: "POST", headers: { cookie, origin: ORIGIN, "content-type": "application/json" }, body: "{}" }),
  );
  return response.status;
}

/** Cookies merged as a browser keeps them: a later Set-Cookie replaces the same name, an empty one removes it. */
export function jar(...cookies: string[]): string {
  const map = new Map<string, string>();
  for (const line of cookies.join("; ").split(/;\s*/)) {
    const at = line.indexOf("=");
    if (at > 0) map.set(line.slice(0, at), line.slice(at + 1));
  }
  return [...map].filter(([, value]) => value !== "").map(([name, value]) => `${name}=${value}`).join("; ");
}

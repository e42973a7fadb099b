/**
 * `trellis/testing`: test an app the way Trellis's own tests do, through its front door. A fresh
 * app per test on an in-memory embedded database (started from a prepared template, so about half
 * a second), users signed up or in through `/api/auth/**`, and for each of them a typed client and
 * a `fetch` that carry their session. `connect(url)` gives the same helpers against a served app,
 * for a script or a seed.
 */
import { randomBytes } from "node:crypto";
import { embedded } from "../kernel/embedded/index.js";
import type { AppStorage, DatabaseConfig } from "../kernel/index.js";
import { memoryStorage } from "../kernel/storage/index.js";
import { App } from "./app.js";
import { createClient } from "./client.js";
import type { BuiltApp, ClientOf, InferRouter } from "./types.js";

/** What `testApp` hands the app factory: a fresh database, a random auth secret and a fresh in-memory store for files. */
export interface TestAppInput {
  db: DatabaseConfig;
  secret: string;
  storage: AppStorage;
}

type AnyApp = App<any, any, any>;
type Handle = (request: Request) => Promise<Response>;

/** The typed client of `Router`; `any` when the router is not known (`connect(url)` without a type). */
type ClientFor<Router> = 0 extends 1 & Router ? any : ClientOf<Router>;

/** A signed-in user: their session as headers, a typed client and a `fetch` that carry it. */
export interface Actor<Router> {
  readonly user: { id: string; email: string; name: string; role?: string | null };
  /** `Cookie` (the session) and `Origin` (so cookie-bearing writes pass the origin check). */
  readonly headers: Headers;
  readonly client: ClientFor<Router>;
  /** `fetch(path or URL, init)` with the session's headers added. */
  fetch(input: string | URL, init?: RequestInit): Promise<Response>;
}

export interface SignUpInput {
  /** @default a unique `user-<n>@example.com` */
  email?: string;
  /** @default "correct-horse-battery-staple" */
  password?: string;
  /** @default the email's local part */
  name?: string;
}

export interface Session<Router> {
  /** Signs a new user up (email and password) and returns them signed in. */
  signUp(input?: SignUpInput): Promise<Actor<Router>>;
  /** Signs an existing user in. */
  signIn(email: string, password?: string): Promise<Actor<Router>>;
  /** An anonymous caller: the typed client and `fetch` with no session. */
  readonly anonymous: Omit<Actor<Router>, "user">;
}

export interface TestApp<Router> extends Session<Router> {
  readonly app: BuiltApp<Router>;
  /** A new user holding the `admin` role (or `role`), signed in. */
  asAdmin(input?: SignUpInput & { role?: string }): Promise<Actor<Router>>;
  /** Closes the app and its database. */
  close(): Promise<void>;
}

const PASSWORD = "correct-horse-battery-staple";
let counter = 0;

/**
 * A fresh, migrated app for one test. `create` builds it from the database and secret given
 * (`(input) => createApp(input)`), or pass an `App` whose database you chose yourself.
 */
export async function testApp<A extends AnyApp>(create: A | ((input: TestAppInput) => A | Promise<A>)): Promise<TestApp<InferRouter<A>>> {
  const app = typeof create === "function" ? await create({ db: embedded({ dataDir: "memory://" }), secret: randomBytes(32).toString("base64"), storage: memoryStorage() }) : create;
  const built = (await app.start()) as unknown as BuiltApp<InferRouter<A>>;
  const origin = baseOf(built);
  const session = sessionOver<InferRouter<A>>(origin, (request) => built.handle(request), (headers) => built.client(headers) as ClientFor<InferRouter<A>>);
  return {
    ...session,
    app: built,
    async asAdmin(input = {}) {
      const actor = await session.signUp(input);
      const role = input.role ?? "admin";
      // The role is re-read on every request, so the same session holds it from the next call on.
      await built.db.updateTable("user" as never).set({ role } as never).where("id" as never, "=", actor.user.id as never).execute();
      return { ...actor, user: { ...actor.user, role } };
    },
    close: () => built.close(),
  };
}

/** The same helpers against an app served elsewhere (`url` its origin): for scripts and seeds. */
export function connect<Router = any>(url: string): Session<Router> {
  const origin = url.replace(/\/$/, "");
  return sessionOver<Router>(origin, (request) => fetch(request), (headers) => createClient<Router>({ url: origin, headers }) as ClientFor<Router>);
}

function sessionOver<Router>(origin: string, handle: Handle, clientFor: (headers: Headers) => ClientFor<Router>): Session<Router> {
  const actor = (headers: Headers) => ({
    headers,
    client: clientFor(headers),
    fetch: (input: string | URL, init: RequestInit = {}) => {
      const merged = new Headers(init.headers);
      // The caller's own headers win (a test may send another cookie on purpose).
      headers.forEach((value, key) => {
        if (!merged.has(key)) merged.set(key, value);
      });
      return handle(new Request(new URL(input, origin), { ...init, headers: merged }));
    },
  });
  const authenticate = async (path: string, body: Record<string, string>): Promise<Actor<Router>> => {
    const response = await handle(
      new Request(`${origin}/api/auth/${path}`, { method: "POST", headers: { "content-type": "application/json", origin }, body: JSON.stringify(body) }),
    );
    if (response.status !== 200) throw new Error(`${path} for ${body.email} answered ${response.status}: ${await response.text()}`);
    const { user } = (await response.json()) as { user: Actor<Router>["user"] };
    const cookie = response.headers
      .getSetCookie()
      .map((line) => line.split(";")[0])
      .join("; ");
    return { user, ...actor(new Headers({ cookie, origin })) };
  };
  return {
    signUp(input = {}) {
      const email = input.email ?? `user-${process.pid}-${++counter}@example.com`;
      return authenticate("sign-up/email", { email, password: input.password ?? PASSWORD, name: input.name ?? email.split("@")[0]! });
    },
    signIn: (email, password = PASSWORD) => authenticate("sign-in/email", { email, password }),
    anonymous: actor(new Headers({ origin })),
  };
}

/** The origin requests are addressed to: the app's `baseUrl` (trusted by the origin check), else localhost. */
function baseOf(built: BuiltApp<any>): string {
  return (built.sealed.baseUrl ?? "http://localhost:3000").replace(/\/$/, "");
}

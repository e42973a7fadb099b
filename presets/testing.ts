/**
 * `trellis/testing`: test an app the way Trellis's own tests do, through its front door. A fresh
 * app per test on its own in-memory embedded database, a copy of the app's migrated schema (a few
 * milliseconds once the file's first test has migrated it, kernel/embedded/copies.ts), users signed
 * up or in through `/api/auth/**`, and for each of them a typed client and a `fetch` that carry
 * their session; the mail the app sent and its queued jobs, run now. `connect(url)` gives the same
 * helpers against a served app, for a script or a seed.
 */
import { randomBytes } from "node:crypto";
import { leaseDatabase, schemaKey } from "../kernel/embedded/copies.js";
import type { AppStorage, DatabaseConfig } from "../kernel/index.js";
import { memoryStorage } from "../kernel/storage/index.js";
import { MailRows, type MailRow } from "../plugins/mail/outbox.js";
import { App } from "./app.js";
import { createClient } from "./client.js";
import { postgresCopy } from "./testing-postgres.js";
import type { BuiltApp, ClientOf } from "./types.js";

export type { MailRow } from "../plugins/mail/outbox.js";

/** What `testApp` hands the app factory: a fresh database, a random auth secret and (always, from `testApp`) a fresh in-memory store for files. */
export interface TestAppInput {
  db: DatabaseConfig;
  secret: string;
  storage?: AppStorage;
}

type AnyApp = App<any, any, any>;
type Handle = (request: Request) => Promise<Response>;

/**
 * The router of what a test names: an `App`, a built app, a factory returning either (as
 * `typeof createApp`), or a router itself. `TestApp<typeof app>` and `TestApp<typeof createApp>` both work.
 */
export type RouterOf<T> = T extends (...args: any[]) => infer R
  ? RouterOf<Awaited<R>>
  : T extends { readonly "~router": infer R }
    ? R
    : T extends BuiltApp<infer R, any>
      ? R
      : T;

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

/** A test's app; `T` is the app, its factory (`typeof createApp`) or its router. */
export interface TestApp<T> extends Session<RouterOf<T>> {
  readonly app: BuiltApp<RouterOf<T>>;
  /** A new user holding the `admin` role (or `role`), signed in. */
  asAdmin(input?: SignUpInput & { role?: string }): Promise<Actor<RouterOf<T>>>;
  /**
   * The mail the app sent (every message, whatever its state), newest first; `to` keeps one
   * address's. Waits for messages still being queued (and runs queued mail jobs) first.
   */
  outbox(filter?: { to?: string }): Promise<MailRow[]>;
  /** The app's jobs: `drain()` runs every job due now (and those they send) and resolves when none is left. */
  readonly jobs: { drain(): Promise<void> };
  /** Closes the app; its database goes back to the pool at the migrated state. */
  close(): Promise<void>;
}

const PASSWORD = "correct-horse-battery-staple";
let counter = 0;

export interface TestAppOptions {
  /**
   * A PostgreSQL server (`postgres://.../any-database`) on which the test gets a database of its own,
   * copied from its schema's migrated template (`CREATE DATABASE ... TEMPLATE`), dropped at `close()`.
   * The role needs `CREATEDB`. Without it, the test gets a copy of the embedded database.
   */
  databaseUrl?: string;
}

type Create = AnyApp | ((input: TestAppInput) => AnyApp | Promise<AnyApp>);

/**
 * A fresh, migrated app for one test. `create` builds it from the database and secret given
 * (`(input) => createApp(input)`), or pass an `App` whose database you chose yourself.
 */
export async function testApp<A extends Create>(create: A, options: TestAppOptions = {}): Promise<TestApp<A>> {
  type Router = RouterOf<A>;
  const started = options.databaseUrl && typeof create === "function" ? await startOnPostgres(create, options.databaseUrl) : { built: await startApp(create), close: undefined };
  const built = started.built as unknown as BuiltApp<Router>;
  const origin = baseOf(built);
  const session = sessionOver<Router>(origin, (request) => built.handle(request), (headers) => built.client(headers) as ClientFor<Router>);
  const jobs = {
    async drain() {
      const service = built.sealed.service("jobs");
      if (!service) throw new Error("t.jobs.drain(): this app has no jobs (.jobs(), .job() or a plugin that queues them)");
      await service.drain();
    },
  };
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
    async outbox(filter = {}) {
      const mail = built.sealed.service("mail");
      if (!mail) throw new Error("t.outbox(): this app sends no mail (add .mail())");
      await mail.flush();
      if (built.sealed.service("jobs")) await jobs.drain();
      return new MailRows(built.db).list({ to: filter.to, take: 1_000 });
    },
    jobs,
    close: started.close ?? (() => built.close()),
  };
}

/** Builds the app on a leased copy of its schema's migrated database (or on its own database), then migrates. */
async function startApp(create: Create): Promise<BuiltApp<any>> {
  if (typeof create !== "function") return create.start();
  const lease = leaseDatabase();
  let built: BuiltApp<any> | undefined;
  try {
    const app = await create({ db: lease.database, secret: randomBytes(32).toString("base64"), storage: memoryStorage() });
    built = app.build() as unknown as BuiltApp<any>;
    // The schema's versions and the plugins that add tables of their own name the template.
    lease.key(schemaKey([built.sealed.schemas, built.describe().plugins.map((plugin) => plugin.name)]));
    if (await lease.current()) {
      // A copy of the schema's migrated template: nothing to migrate, and plugins still hear `migrated`.
      await built.migrator.assumeLatest();
      return built;
    }
    await built.sealed.ready();
    const { error } = await built.migrator.migrateToLatest();
    if (error) throw error instanceof Error ? error : new Error(String(error));
    await lease.migrated();
    return built;
  } catch (error) {
    await built?.close().catch(() => {});
    await lease.release();
    throw error;
  }
}

/** Builds the app on a database of its own on PostgreSQL, copied from its schema's migrated template; closing drops it. */
async function startOnPostgres(create: (input: TestAppInput) => AnyApp | Promise<AnyApp>, databaseUrl: string): Promise<{ built: BuiltApp<any>; close: () => Promise<void> }> {
  const copy = postgresCopy(databaseUrl);
  const input = (db: DatabaseConfig): TestAppInput => ({ db, secret: randomBytes(32).toString("base64"), storage: memoryStorage() });
  let built: BuiltApp<any> | undefined;
  const close = async () => {
    try {
      await built?.close();
    } finally {
      await copy.drop();
    }
  };
  try {
    built = (await create(input(copy.database))).build() as unknown as BuiltApp<any>;
    // The template is migrated by an app of its own, built by the same factory and closed before it is copied.
    await copy.prepare(schemaKey([built.sealed.schemas, built.describe().plugins.map((plugin) => plugin.name)]), async (db) => {
      const template = await (await create(input(db))).start();
      await template.close();
    });
    await built.sealed.ready();
    const { error } = await built.migrator.migrateToLatest();
    if (error) throw error instanceof Error ? error : new Error(String(error));
    return { built, close };
  } catch (error) {
    await close().catch(() => {});
    throw error;
  }
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

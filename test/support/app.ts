import { afterEach } from "vitest";
import Database from "better-sqlite3";
import { SqliteDialect } from "kysely";
import type { DatabaseConfig } from "../../kernel/index.js";
import { within } from "./within.js";

/** A throwaway in-memory SQLite database: the cheapest real database for tests that barely touch it. */
export function sqliteMemory(): DatabaseConfig {
  return { dialect: new SqliteDialect({ database: new Database(":memory:") }), kind: "sqlite" };
}

export interface CallResult<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

type Handler = { handle(request: Request): Promise<Response> };

/** Calls a procedure over HTTP the way the RPC client does: `POST /rpc/a/b` with `{ json: input }`. */
export async function rpc<T = any>(app: Handler, name: string, input?: unknown, headers: HeadersInit = {}): Promise<CallResult<T>> {
  const response = await app.handle(
    new Request(`http://localhost/rpc/${name.split(".").join("/")}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...Object.fromEntries(new Headers(headers)) },
      body: JSON.stringify(input === undefined ? {} : { json: input }),
    }),
  );
  const text = await response.text();
  const parsed = text ? JSON.parse(text) : undefined;
  return { status: response.status, body: parsed?.json ?? parsed, headers: response.headers };
}

/** A plain request through the front door; the body is parsed as JSON when it is JSON. */
export async function request(app: Handler, method: string, path: string, init: RequestInit = {}): Promise<CallResult> {
  const response = await app.handle(new Request(`http://localhost${path}`, { method, ...init }));
  const text = await response.text();
  let body: unknown = text;
  if (response.headers.get("content-type")?.includes("json") && text) body = JSON.parse(text);
  return { status: response.status, body, headers: response.headers };
}

/**
 * Builds apps that are closed after each test: `const build = closeAfterEach();` at the top of a
 * test file, then `build(new App(...))` inside tests.
 */
export function closeAfterEach(): <T extends { build(): { close(): Promise<void> } }>(app: T) => ReturnType<T["build"]> {
  const opened: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((app) => within(app.close(), 30_000, "an app's close() after the test")));
  });
  return (app) => {
    const built = app.build();
    opened.push(built);
    return built as never;
  };
}

/** The error `fn` throws (so a test can assert its code and tags), or a failure when it does not throw. */
export function errorOf(fn: () => unknown): any {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to throw");
}

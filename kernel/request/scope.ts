import { AsyncLocalStorage } from "node:async_hooks";
import type { RequestEvent } from "../event.js";

/**
 * The request (or job run) whose work is running, for code that sits below the context: the
 * database layer has no context argument, yet a trigger wants to know who wrote. Entered by the
 * plugins that need it (the audit plugin around each request, the jobs plugin around each run);
 * undefined elsewhere (a seed script, a migration).
 */
const scope = new AsyncLocalStorage<RequestEvent>();

export function runInRequest<T>(event: RequestEvent, fn: () => T): T {
  return scope.run(event, fn);
}

export function requestInScope(): RequestEvent | undefined {
  return scope.getStore();
}

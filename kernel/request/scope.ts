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

/** The event each `client()` call's context was made for. */
const clientEvents = new WeakMap<object, RequestEvent>();

/** Marks a `client()` call's context with its event; the interceptor below runs the call in its scope. */
export function inClientScope<C extends object>(context: C, event: RequestEvent): C {
  clientEvents.set(context, event);
  return context;
}

/** `client()`'s interceptor: the procedure runs in its call's scope, as a served request's does. */
export function clientScopeInterceptor<T>({ next, context }: { next: () => Promise<T>; context?: object }): Promise<T> {
  const event = context && clientEvents.get(context);
  return event ? runInRequest(event, next) : next();
}

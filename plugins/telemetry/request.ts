import { errorResponse, redactPath, redactedQueryOf, type HttpMiddleware, type RequestEvent, type SealedApp } from "../../kernel/index.js";
import type { AppMetrics } from "./metrics.js";
import type { Series } from "./series.js";
import type { Tracing } from "./tracing.js";

const SERVER = 1;
/** The request log line's extra fields (kernel/log/request-line.ts reads the same registered symbol). */
const LOG_FIELDS = Symbol.for("trellis.logFields");

const STATUS_CODES: Record<number, string> = {
  400: "BAD_REQUEST",
  401: "UNAUTHORIZED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  405: "METHOD_NOT_SUPPORTED",
  409: "CONFLICT",
  413: "PAYLOAD_TOO_LARGE",
  429: "TOO_MANY_REQUESTS",
  500: "INTERNAL_SERVER_ERROR",
  503: "SERVICE_UNAVAILABLE",
};

export interface RequestObserverOptions {
  tracing: Tracing | undefined;
  metrics: AppMetrics | undefined;
  userId: boolean;
  /** Is `name` a registered procedure (an `/rpc` path names one only then: bounded label values). */
  isProcedure(name: string): boolean;
  /** The sealed app, to answer a thrown failure as the kernel would (and so know its status). */
  sealed(): SealedApp | undefined;
}

/**
 * The outermost middleware: one server span per request (the caller's `traceparent` as its parent,
 * the route template as `http.route`, the trace id in the request's log line) and the request
 * count, duration and error metrics. Everything else Trellis traces nests under this span.
 */
export function requestObserver(options: RequestObserverOptions): HttpMiddleware {
  const { tracing, metrics } = options;

  /** `/rpc` paths of registered procedures: as many entries as procedures, made once each. */
  const rpcRoutes = new Map<string, string>();
  /** The route template: for `/rpc/**` the procedure's own path when it exists, else the router's template. */
  const routeOf = (event: RequestEvent): string => {
    // The kernel's fast path for POST /rpc/** skips the router, and so leaves `route` unset.
    const template = event.route ?? (event.isRpc ? "/rpc/**" : "none");
    if (template !== "/rpc/**") return template;
    const known = rpcRoutes.get(event.path);
    if (known !== undefined) return known;
    const name = event.procedureName;
    if (name === undefined || !options.isProcedure(name)) return "/rpc/**";
    rpcRoutes.set(event.path, event.path);
    return event.path;
  };

  /** The count and duration series of each route, method and status, kept: a request builds no label text. */
  const kept = new Map<string, Map<string, Map<number, { count: Series; duration: Series }>>>();
  const seriesOf = (metrics: AppMetrics, method: string, route: string, status: number) => {
    let byMethod = kept.get(route);
    if (!byMethod) kept.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (!series) {
      const code = String(status);
      byStatus.set(status, (series = { count: metrics.requests.series(method, route, code), duration: metrics.requestDuration.series(method, route, code) }));
    }
    return series;
  };

  const record = (event: RequestEvent, status: number, started: number) => {
    if (!metrics) return;
    const series = seriesOf(metrics, event.method, routeOf(event), status);
    metrics.requests.inc(series.count, 1);
    metrics.requestDuration.record(series.duration, (performance.now() - started) / 1000);
    if (status < 400) return;
    metrics.errors.add(1, event.error?.code ?? STATUS_CODES[status] ?? `HTTP_${status}`, surfaceOf(event));
    // The limiter's 429 is the one that says when to retry (a full live-stream cap does not).
    if (status === 429 && event.hasResponseHeaders && event.responseHeaders.has("retry-after")) metrics.rateLimitRejections.add(1);
  };

  // A failure thrown past every other middleware is answered here exactly as the kernel would
  // answer it (mapped, reported once, in the RPC envelope under /rpc), so its status is known.
  const answer = (event: RequestEvent, error: unknown): Response => {
    const sealed = options.sealed();
    if (!sealed) throw error;
    return errorResponse(sealed.toError(error, event.isRpc ? "rpc" : "route", event), event.isRpc);
  };

  const middleware: HttpMiddleware = (event, next) => {
    const traced = tracing?.enabled() ?? false;
    if (!traced && !metrics) return next();
    const started = performance.now();
    // `atOnce`: `next()` may give the response itself (a raw route that answered at once), or
    // throw at once (a later middleware that is not async): that failure is answered here too.
    let result: Response | Promise<Response> | undefined;
    try {
      result = traced ? undefined : next();
    } catch (error) {
      result = answer(event, error);
    }
    if (result instanceof Response) {
      record(event, result.status, started);
      return result as unknown as Promise<Response>;
    }
    if (result) {
      // One promise, not a catch and a then: this runs on every request.
      return result.then(
        (response) => (record(event, response.status, started), response),
        (error: unknown) => {
          const response = answer(event, error);
          record(event, response.status, started);
          return response;
        },
      );
    }
    const { api, tracer } = tracing!;
    const parent = tracing!.extract(event.headers);
    // Tokens travel in URLs (reset links, verification and sign-in links): redacted as the log line does.
    const attributes: Record<string, string> = { "http.request.method": event.method, "url.path": redactPath(event.path), "url.scheme": event.request.url.startsWith("https:") ? "https" : "http" };
    const query = redactedQueryOf(event.request.url);
    if (query !== undefined) attributes["url.query"] = query;
    const span = tracer.startSpan(event.method, { kind: SERVER, attributes }, parent);
    const spanContext = span.spanContext();
    if (span.isRecording()) {
      const holder = event as unknown as Record<symbol, Record<string, unknown> | undefined>;
      holder[LOG_FIELDS] = { ...holder[LOG_FIELDS], traceId: spanContext.traceId, spanId: spanContext.spanId };
    }
    const finish = (status: number) => {
      const route = routeOf(event);
      if (route !== "none") {
        span.updateName(`${event.method} ${route}`);
        span.setAttribute("http.route", route);
      }
      span.setAttribute("http.response.status_code", status);
      const procedure = event.procedureName;
      if (procedure !== undefined && (route !== "/rpc/**" || !event.isRpc) && options.isProcedure(procedure)) span.setAttribute("trellis.procedure.name", procedure);
      if (status >= 400) span.setAttribute("error.type", event.error?.code ?? STATUS_CODES[status] ?? String(status));
      // A server span fails on 5xx only: a 4xx is the caller's mistake, answered correctly.
      if (status >= 500) span.setStatus({ code: api.SpanStatusCode.ERROR, message: event.error?.code ?? STATUS_CODES[status] });
      if (options.userId) {
        const state = event.sessionState;
        const id = state && !(state instanceof Promise) ? state.user?.id : undefined;
        if (id !== undefined) span.setAttribute("enduser.id", id);
      }
      span.end();
      record(event, status, started);
    };
    // The executor also takes a failure `next()` throws at once.
    return new Promise<Response>((resolve) => resolve(api.context.with(api.trace.setSpan(parent, span), next)))
      .catch((error: unknown) => answer(event, error))
      .then(
        (response) => (finish(response.status), response),
        (error: unknown) => {
          finish(500);
          throw error;
        },
      );
  };
  middleware.displayName = "telemetry:request";
  middleware.atOnce = true;
  // Without metrics, a request is observed only while an SDK is registered (it may be registered
  // later, so this is asked per request): otherwise the kernel steps over this middleware.
  if (!metrics) middleware.passes = () => !(tracing?.enabled() ?? false);
  return middleware;
}

function surfaceOf(event: RequestEvent): string {
  if (event.isRpc) return "rpc";
  if (event.path === "/rest" || event.path.startsWith("/rest/")) return "rest";
  // REST and MCP name the procedure they ran on the event; of the two, only MCP remains here.
  return event.procedure !== undefined ? "mcp" : "route";
}

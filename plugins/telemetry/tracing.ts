import type { Attributes, Context, Span, SpanContext, SpanKind, Tracer, TracerProvider } from "@opentelemetry/api";
import type { Otel } from "./peers.js";

/** W3C Trace Context: `00-<32 hex trace id>-<16 hex span id>-<2 hex flags>`. */
const TRACEPARENT = /^([\da-f]{2})-([\da-f]{32})-([\da-f]{16})-([\da-f]{2})(-.*)?$/;

const headerGetter = {
  get: (headers: Headers, key: string) => headers.get(key) ?? undefined,
  keys: (headers: Headers) => [...headers.keys()],
};

/**
 * Spans through `@opentelemetry/api` only: the app brings the SDK. The request's span is started
 * only when a tracer provider is registered, and every other span only under a recording span, so
 * with no SDK each observation costs a couple of property reads.
 */
export class Tracing {
  readonly tracer: Tracer;
  readonly #noop: TracerProvider;

  constructor(readonly api: Otel) {
    this.tracer = api.trace.getTracer("trellis");
    // A proxy with no delegate answers the API's no-op provider: what "no SDK registered" looks like.
    this.#noop = new api.ProxyTracerProvider().getDelegate();
  }

  /** True when an SDK's tracer provider is registered (now, not at build: it may come later). */
  enabled(): boolean {
    const provider = this.api.trace.getTracerProvider() as TracerProvider & { getDelegate?(): TracerProvider };
    const delegate = typeof provider.getDelegate === "function" ? provider.getDelegate() : provider;
    return delegate !== this.#noop && delegate.constructor?.name !== "NoopTracerProvider";
  }

  /** The active context when it holds a recording span (children are started only under one). */
  recordingParent(): Context | undefined {
    const active = this.api.context.active();
    return this.api.trace.getSpan(active)?.isRecording() ? active : undefined;
  }

  /**
   * The caller's trace from the request's headers: through the registered propagator, else the
   * W3C `traceparent` (and `tracestate`) read here, so a trace joins even with no propagator set.
   */
  extract(headers: Headers): Context {
    const { api } = this;
    const extracted = api.propagation.extract(api.ROOT_CONTEXT, headers, headerGetter);
    if (api.trace.getSpanContext(extracted)) return extracted;
    const match = TRACEPARENT.exec(headers.get("traceparent")?.trim().toLowerCase() ?? "");
    if (!match || match[1] === "ff") return extracted;
    const spanContext = { traceId: match[2]!, spanId: match[3]!, traceFlags: parseInt(match[4]!, 16) & 1, isRemote: true };
    if (!api.isSpanContextValid(spanContext)) return extracted;
    const state = headers.get("tracestate");
    return api.trace.setSpanContext(extracted, state ? { ...spanContext, traceState: api.createTraceState(state) } : spanContext);
  }

  /**
   * Runs `run` in a child span of `parent`, ends it when `run` settles, and records a failure
   * with its code (never its message: it may quote a value).
   */
  within<T>(parent: Context, name: string, kind: SpanKind, attributes: Attributes, run: (span: Span) => Promise<T>, links?: SpanContext[]): Promise<T> {
    const { api } = this;
    const span = this.tracer.startSpan(name, links?.length ? { kind, attributes, links: links.map((context) => ({ context })) } : { kind, attributes }, parent);
    return api.context.with(api.trace.setSpan(parent, span), () => run(span)).then(
      (value) => {
        span.end();
        return value;
      },
      (error: unknown) => {
        this.fail(span, error);
        span.end();
        throw error;
      },
    );
  }

  /** Marks a span failed with the error's code (`NOT_FOUND`, `INTERNAL_SERVER_ERROR`, a SQLSTATE). */
  fail(span: Span, error: unknown): void {
    const code = errorCode(error);
    span.setAttribute("error.type", code);
    span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: code });
  }
}

/** The code a failure is known by: an `RpcError`'s code, a database's SQLSTATE, else the class name. */
export function errorCode(error: unknown): string {
  if (typeof error === "object" && error !== null) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && code.length > 0 && code.length <= 64) return code;
    const name = (error as { name?: unknown }).name;
    if (typeof name === "string" && name.length > 0) return name;
  }
  return "Error";
}

import { RequestEvent, runInRequest, type AppRpcContext, type Logger, type SealedApp } from "../../kernel/index.js";
import type { Definition } from "./registry.js";
import { unwrap, type JobTenancy } from "./carried.js";
import type { JobsService } from "./types.js";
import type { StandardSchema } from "./options.js";
import type { JobOutcome, JobsTelemetry } from "./telemetry.js";

/** A job as pg-boss hands it to a worker (`includeMetadata`). */
export interface FetchedJob {
  id: string;
  name: string;
  data: unknown;
  retryCount: number;
  retryLimit: number;
}

export interface RunDeps {
  sealed: () => SealedApp;
  logger: Logger | undefined;
  complete(name: string, id: string, output: unknown): Promise<unknown>;
  fail(name: string, id: string, error: { message: string; name?: string; code?: string }): Promise<unknown>;
  report(error: unknown): void;
  /** Signals of running handlers, aborted at shutdown once the grace period is over. */
  running: Set<AbortController>;
  /** Spans and metrics, when the app has the telemetry plugin. */
  telemetry: JobsTelemetry | undefined;
  /** The organizations plugin's service, when the app has organizations. */
  tenancy: JobTenancy | undefined;
  /** A context's own `context.jobs`, whose sends carry its organization. */
  within(context: AppRpcContext): JobsService;
}

/** Marks a failure that is part of normal operation (a webhook receiver answered 500): retried, logged, not reported to `onError`. */
export const EXPECTED_FAILURE = Symbol.for("trellis.jobs.expected");

/**
 * Runs one job: validates its data, builds a request-less context (acting in the organization the
 * job was sent in, if any), runs the handler under its
 * timeout, then completes or fails it. Each job of a batch settles on its own, so one failure never
 * fails its neighbours. With telemetry, the attempt runs in a span of its own (`JobsTelemetry.run`).
 */
export async function runJob(definition: Definition, job: FetchedJob, deps: RunDeps): Promise<void> {
  if (!deps.telemetry) return void (await attempt(definition, job, deps));
  await deps.telemetry.run({ id: job.id, name: definition.name, attempt: job.retryCount + 1 }, () => attempt(definition, job, deps));
}

async function attempt(definition: Definition, job: FetchedJob, deps: RunDeps): Promise<{ outcome: JobOutcome; failure?: Error }> {
  const controller = new AbortController();
  const timeoutMs = (definition.policy.expireInSeconds - 1) * 1000;
  const timer = setTimeout(() => controller.abort(new Error(`job "${definition.name}" timed out after ${timeoutMs / 1000} s`)), timeoutMs);
  deps.running.add(controller);
  try {
    const { data: sent, carried } = unwrap(job.data);
    const data = definition.input ? await parse(definition.input, sent, definition.name) : sent;
    // The run's internal address names the job and, when it acts in an organization, the organization
    // and the member it acts for (the audit log reads them from here).
    const acting = carried ? `?${new URLSearchParams({ organization: carried.organizationId, for: carried.userId })}` : "";
    const event = new RequestEvent(new Request(`http://trellis.internal/jobs/${encodeURIComponent(definition.name)}${acting}`));
    const context = await deps.sealed().createContext(event);
    // Sent during a request in an organization: the run is in it too, and so are the jobs it sends.
    if (carried && deps.tenancy) {
      deps.tenancy.actAs(context, carried);
      (context as unknown as { jobs: JobsService }).jobs = deps.within(context);
    }
    const info = { id: job.id, name: job.name, attempt: job.retryCount + 1, attempts: job.retryLimit + 1, organizationId: carried?.organizationId ?? null };
    const result = await Promise.race([
      // In the run's scope, so what the handler writes is known to be this job's (the audit log reads it).
      runInRequest(event, () => Promise.resolve().then(() => definition.handler({ data, context: context as AppRpcContext, job: info, signal: controller.signal, logger: deps.logger }))),
      aborted(controller.signal),
    ]);
    await deps.complete(definition.name, job.id, result ?? null);
    return { outcome: "completed" };
  } catch (error) {
    const failure = error instanceof Error ? error : new Error(String(error));
    // A failure to record the failure (the database went away) leaves the job active: it runs
    // again once its timeout passes, as after a crash.
    await deps.fail(definition.name, job.id, { message: failure.message, name: failure.name, code: (failure as { code?: string }).code }).catch(deps.report);
    const last = job.retryCount >= job.retryLimit;
    if ((failure as unknown as Record<symbol, unknown>)[EXPECTED_FAILURE]) {
      deps.logger?.warn({ job: job.id, queue: definition.name, attempt: job.retryCount + 1, error: failure.message }, `job ${definition.name} failed${last ? " for good" : ", will retry"}`);
    } else {
      deps.report(failure);
    }
    return { outcome: last ? "failed" : "retry", failure };
  } finally {
    clearTimeout(timer);
    deps.running.delete(controller);
  }
}

function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }));
}

/** Validates with a Standard Schema; the error names the job and every issue's path. */
export async function parse(schema: StandardSchema, value: unknown, name: string): Promise<unknown> {
  const result = await schema["~standard"].validate(value);
  if (!result.issues) return result.value;
  const issues = result.issues.map((issue) => {
    const path = (issue.path ?? []).map((part) => String(typeof part === "object" ? part.key : part)).join(".");
    return path ? `${path}: ${issue.message}` : issue.message;
  });
  throw Object.assign(new Error(`job "${name}": invalid data (${issues.join("; ")})`), { issues });
}

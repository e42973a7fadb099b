import type { Telemetry } from "../../kernel/index.js";
import type { QueueInfo } from "./types.js";

type SpanContext = NonNullable<ReturnType<Telemetry["spanContext"]>>;

/** OpenTelemetry's `SpanKind`, as numbers: the API may not be installed. */
const PRODUCER = 3;
const CONSUMER = 4;
/** Links kept for runs in this process; a job run elsewhere leaves its entry until it ages out. */
const MAX_LINKS = 1000;
/** The states `trellis_job_queue_depth` reports: waiting, running, and failed for good. */
const DEPTH_STATES = ["created", "retry", "active", "failed"] as const;

export type JobOutcome = "completed" | "retry" | "failed";

/**
 * The jobs plugin's spans and metrics, through the telemetry plugin's service: a producer span per
 * `send` in the sender's trace, a consumer span per run (a trace of its own, linked to the send when
 * it ran in this process), `trellis_job_runs_total` by queue and outcome, and
 * `trellis_job_queue_depth` read from the job table at scrape time.
 */
export class JobsTelemetry {
  readonly #links = new Map<string, SpanContext>();
  readonly #runs;

  constructor(
    private readonly telemetry: Telemetry,
    queues: () => Promise<QueueInfo[]>,
  ) {
    this.#runs = telemetry.counter({ name: "trellis_job_runs_total", help: "Job runs, by queue and outcome (completed, retry: failed and will run again, failed: for good)", labelNames: ["queue", "outcome"] });
    telemetry.gauge({
      name: "trellis_job_queue_depth",
      help: "Jobs by queue and state (created and retry: waiting; active: running; failed: failed for good and kept)",
      labelNames: ["queue", "state"],
      async collect() {
        // A scrape while the app closes reads nothing: the gauge keeps its last values.
        const infos = await queues().catch(() => undefined);
        for (const info of infos ?? []) for (const state of DEPTH_STATES) this.set({ queue: info.name, state }, info.counts[state]);
      },
    });
  }

  /** Sends in a producer span under the active one, and keeps its context for the run's link. */
  send(queue: string, send: () => Promise<string | null>): Promise<string | null> {
    return this.telemetry.span(
      `send ${queue}`,
      async (span) => {
        const id = await send();
        if (span && id) {
          span.setAttribute("messaging.message.id", id);
          if (this.#links.size >= MAX_LINKS) this.#links.delete(this.#links.keys().next().value!);
          this.#links.set(id, span.spanContext());
        }
        return id;
      },
      { kind: PRODUCER, attributes: { ...messaging(queue), "messaging.operation.type": "send" } },
    );
  }

  /**
   * Runs one attempt in a consumer span of its own trace. `attempt` resolves with the outcome and
   * the failure, which marks the span failed with its code (the failure is already handled).
   */
  async run(job: { id: string; name: string; attempt: number }, attempt: () => Promise<{ outcome: JobOutcome; failure?: Error }>): Promise<void> {
    const link = this.#links.get(job.id);
    const attributes = { ...messaging(job.name), "messaging.operation.type": "process", "messaging.message.id": job.id, "trellis.job.name": job.name, "trellis.job.attempt": job.attempt };
    let handled: Error | undefined;
    await this.telemetry
      .span(
        `process ${job.name}`,
        async (span) => {
          const { outcome, failure } = await attempt();
          this.#runs.inc({ queue: job.name, outcome });
          span?.setAttribute("trellis.job.outcome", outcome);
          if (outcome !== "retry") this.#links.delete(job.id);
          // Thrown only to mark the span: the failure is recorded and reported already.
          if (failure) throw (handled = failure);
        },
        { kind: CONSUMER, root: true, attributes, links: link && [link] },
      )
      .catch((error: unknown) => {
        if (error !== handled) throw error;
      });
  }
}

function messaging(queue: string) {
  return { "messaging.system": "pg-boss", "messaging.destination.name": queue };
}

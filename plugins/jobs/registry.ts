import { TrellisError } from "../../kernel/index.js";
import { JOBS_BAD_OPTION, JOBS_DUPLICATE, JOBS_LATE_DEFINE } from "./errors.js";
import { assertJobName, queuePolicy, type JobDefinitionOptions, type QueuePolicy, type StandardSchema } from "./options.js";
import type { JobHandler } from "./types.js";

/** A job kind: its handler, its queue's policy and, for a cron, its schedule. */
export interface Definition {
  name: string;
  kind: "job" | "cron";
  /** Who defined it: `app` for `.job()`/`.cron()`, else the plugin's name (shown by `_admin.jobs.queues`). */
  owner: string;
  policy: QueuePolicy;
  concurrency: number;
  input: StandardSchema | undefined;
  handler: JobHandler<any, any>;
  cron?: { expression: string; tz: string };
}

/**
 * Job kinds, defined at build time (the facade's `.job()` and `.cron()`, other plugins' `define`)
 * and fixed once the engine starts: a replica that starts knows every queue it must work.
 */
export class Definitions {
  readonly #byName = new Map<string, Definition>();
  #sealed = false;

  define(owner: string, name: string, options: JobDefinitionOptions<any>, handler: JobHandler<any, any>): Definition {
    return this.#add({ name, kind: "job", owner, policy: queuePolicy(name, options), concurrency: options.concurrency ?? 1, input: options.input, handler }, "job");
  }

  cron(owner: string, name: string, expression: string, handler: JobHandler<any, any>, options: JobDefinitionOptions<any> & { tz?: string } = {}): Definition {
    assertCron(name, expression);
    const tz = options.tz ?? "UTC";
    assertTimeZone(name, tz);
    // A missed tick is not worth running twice: one retry by default, the next tick comes anyway.
    const policy = queuePolicy(name, { retry: 1, ...options });
    // A tick carries no data: the handler sees `data: undefined` whatever the engine stored.
    const tick: JobHandler<any, any> = (run) => handler({ ...run, data: undefined });
    return this.#add({ name, kind: "cron", owner, policy, concurrency: 1, input: undefined, handler: tick, cron: { expression: expression.trim(), tz } }, "cron");
  }

  #add(definition: Definition, what: string): Definition {
    if (this.#sealed) {
      throw new TrellisError(JOBS_LATE_DEFINE, `${what} "${definition.name}" is defined after the jobs engine started; define jobs while the app builds`, { plugin: "jobs" });
    }
    assertJobName(definition.name, what);
    const existing = this.#byName.get(definition.name);
    if (existing) {
      throw new TrellisError(JOBS_DUPLICATE, `${what} "${definition.name}" is already defined (by ${existing.owner === "app" ? "the app" : `the "${existing.owner}" plugin`})`, { plugin: "jobs" });
    }
    this.#byName.set(definition.name, definition);
    return definition;
  }

  get(name: string): Definition | undefined {
    return this.#byName.get(name);
  }

  all(): Definition[] {
    return [...this.#byName.values()];
  }

  /** Checks what can only be checked once every kind is known, then refuses new ones. */
  seal(): void {
    this.#sealed = true;
    for (const definition of this.#byName.values()) {
      const target = definition.policy.deadLetter;
      if (target !== undefined && !this.#byName.has(target)) {
        throw new TrellisError(JOBS_BAD_OPTION, `job "${definition.name}": deadLetter "${target}" is not a defined job`, { plugin: "jobs" });
      }
    }
  }
}

/** Five fields (minute to weekday) or six (seconds first), as pg-boss's cron parser reads them. */
function assertCron(name: string, expression: string): void {
  const fields = typeof expression === "string" ? expression.trim().split(/\s+/) : [];
  if (fields.length < 5 || fields.length > 6 || !fields.every((field) => /^[\d*/,\-A-Za-z?LW#]+$/.test(field))) {
    throw new TrellisError(JOBS_BAD_OPTION, `cron "${name}": "${expression}" is not a cron expression (five fields: minute hour day month weekday, e.g. "*/5 * * * *")`, { plugin: "jobs" });
  }
}

function assertTimeZone(name: string, tz: string): void {
  try {
    new Intl.DateTimeFormat("en", { timeZone: tz });
  } catch {
    throw new TrellisError(JOBS_BAD_OPTION, `cron "${name}": unknown time zone "${tz}" (an IANA name such as "Europe/Paris")`, { plugin: "jobs" });
  }
}

import { z } from "zod";
import { RpcError, type AppRpcContext, type ProcedureBase } from "../../kernel/index.js";
import type { JobRecord, JobsService } from "./types.js";

const STATES = ["created", "retry", "active", "completed", "cancelled", "failed"] as const;
const page = { take: z.number().int().min(1).max(200).optional(), skip: z.number().int().min(0).max(100_000).optional() };
const one = z.object({ queue: z.string().min(1), id: z.string().min(1) });

/**
 * `_admin.jobs.*`, this plugin's section of the admin API (the service `admin-section:jobs`, which
 * the admin plugin mounts behind its role check, so a caller without the role gets 401/403 before
 * any input is read): queues with their counts, jobs by state (failed ones with their error and
 * attempts), and retry or cancel by hand.
 */
export function jobsAdminSection(jobs: JobsService) {
  return (gated: ProcedureBase<AppRpcContext>) => jobProcedures(gated, jobs);
}

function jobProcedures(gated: ProcedureBase<AppRpcContext>, jobs: JobsService) {
  const known = (queue: string | undefined) => {
    if (queue !== undefined && !jobs.describe().queues.includes(queue)) throw new RpcError("BAD_REQUEST", { message: `Unknown queue "${queue}"` });
  };
  const found = async (queue: string, id: string): Promise<JobRecord> => {
    known(queue);
    const job = await jobs.get(queue, id);
    if (!job) throw new RpcError("NOT_FOUND", { message: `No job ${id} in queue "${queue}"` });
    return job;
  };
  return {
    queues: gated.handler(() => jobs.queues()),
    counts: gated.handler(() => jobs.counts()),
    list: gated.input(z.object({ queue: z.string().min(1).optional(), state: z.enum(STATES).optional(), ...page })).handler(({ input }) => {
      known(input.queue);
      return jobs.list(input);
    }),
    failed: gated.input(z.object({ queue: z.string().min(1).optional(), ...page }).default({})).handler(({ input }) => {
      known(input.queue);
      return jobs.list({ ...input, state: "failed" });
    }),
    get: gated.input(one).handler(({ input }) => found(input.queue, input.id)),
    retry: gated.input(one).handler(async ({ input }) => {
      const job = await found(input.queue, input.id);
      if (!(await jobs.retry(input.queue, input.id))) throw new RpcError("CONFLICT", { message: `Job ${input.id} is ${job.state}; only failed jobs can be retried` });
      return (await jobs.get(input.queue, input.id))!;
    }),
    cancel: gated.input(one).handler(async ({ input }) => {
      const job = await found(input.queue, input.id);
      if (!(await jobs.cancel(input.queue, input.id))) throw new RpcError("CONFLICT", { message: `Job ${input.id} is ${job.state}; only jobs that have not finished can be cancelled` });
      return (await jobs.get(input.queue, input.id))!;
    }),
  };
}

/** What `_admin.jobs` holds, for a typed client: `createClient<{ _admin: { jobs: AdminJobsRouter } }>`. */
export type AdminJobsRouter = ReturnType<typeof jobProcedures>;

import { useEffect, useState } from "preact/hooks";
import { jobsAdmin, messageOf, type JobSummary, type QueueSummary } from "./api.js";
import { display } from "./values.js";

type Queue = QueueSummary;
type Job = JobSummary;
const STATES = ["created", "retry", "active", "completed", "cancelled", "failed"] as const;

/** Queues with their counts by state, and failed jobs with their error: retry one by hand. */
export function Jobs() {
  const [queues, setQueues] = useState<Queue[]>();
  const [failed, setFailed] = useState<Job[]>();
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();

  const load = async () => {
    try {
      const [q, f] = await Promise.all([jobsAdmin.queues(), jobsAdmin.failed({})]);
      setQueues(q);
      setFailed(f);
      setError(undefined);
    } catch (e) {
      setError(messageOf(e));
    }
  };
  useEffect(() => void load(), []);

  const retry = async (job: Job) => {
    try {
      await jobsAdmin.retry({ queue: job.queue, id: job.id });
      setNotice(`Job ${job.id} of ${job.queue} will run again`);
      await load();
    } catch (e) {
      setError(messageOf(e));
    }
  };

  return (
    <>
      <h1>Jobs</h1>
      {error && <p role="alert" class="error">{error}</p>}
      {notice && <p role="status">{notice}</p>}
      <section aria-labelledby="queues-h">
        <h2 id="queues-h">Queues</h2>
        {queues && (
          <table>
            <thead>
              <tr><th scope="col">Queue</th><th scope="col">Schedule</th>{STATES.map((s) => <th scope="col" key={s}>{s}</th>)}</tr>
            </thead>
            <tbody>
              {queues.map((q) => (
                <tr key={q.name}>
                  <td>{q.name}</td>
                  <td>{q.cron ? `${q.cron}${q.tz && q.tz !== "UTC" ? ` (${q.tz})` : ""}` : ""}</td>
                  {STATES.map((s) => <td class="num" key={s}>{q.counts[s]}</td>)}
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section aria-labelledby="failed-h">
        <h2 id="failed-h">Failed jobs</h2>
        {failed && failed.length === 0 && <p>No failed jobs.</p>}
        {failed && failed.length > 0 && (
          <table>
            <thead><tr><th scope="col">Queue</th><th scope="col">Error</th><th scope="col">Attempts</th><th scope="col">Failed at</th><th scope="col">Actions</th></tr></thead>
            <tbody>
              {failed.map((job) => (
                <tr key={job.id}>
                  <td>{job.queue}</td>
                  <td>{job.error}</td>
                  <td class="num">{job.attempts} of {job.maxAttempts}</td>
                  <td>{display(job.completedAt)}</td>
                  <td><button type="button" aria-label={`Retry job ${job.id}`} onClick={() => retry(job)}>Retry</button></td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </>
  );
}

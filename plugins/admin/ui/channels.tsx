import { useEffect, useState } from "preact/hooks";
import { channelsAdmin, messageOf, type ChannelStatsSummary } from "./api.js";

/** The busiest channels shown; a process may hold thousands. */
const SHOWN = 100;

/** How often the view asks again: message rates are the counters' change between two answers. */
const EVERY_MS = 2_000;

interface Sample {
  stats: ChannelStatsSummary;
  at: number;
  /** Messages per second since the answer before; none on the first. */
  rates?: { published: number; delivered: number };
}

const rate = (now: number, before: number, seconds: number) => Math.max(0, Math.round((now - before) / seconds));

/** Channels: this process's connections, each channel's members and presence keys, and message rates. */
export function Channels() {
  const [sample, setSample] = useState<Sample>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    let last: Sample | undefined;
    const load = () =>
      channelsAdmin.list().then((stats) => {
        const at = Date.now();
        const seconds = last ? (at - last.at) / 1000 : 0;
        last = { stats, at, ...(last && seconds > 0 ? { rates: { published: rate(stats.published, last.stats.published, seconds), delivered: rate(stats.delivered, last.stats.delivered, seconds) } } : {}) };
        setSample(last);
        setError(undefined);
      }, (e) => setError(messageOf(e)));
    void load();
    const timer = setInterval(load, EVERY_MS);
    return () => clearInterval(timer);
  }, []);
  const stats = sample?.stats;
  const busiest = stats ? [...stats.channels].sort((a, b) => b.members - a.members).slice(0, SHOWN) : [];
  return (
    <>
      <div class="title">
        <h1>Channels</h1>
      </div>
      {error && <p role="alert" class="error">{error}</p>}
      {stats && (
        <dl class="facts" aria-label="Channel totals">
          <dt>Connections</dt><dd>{stats.connections}</dd>
          <dt>Between replicas</dt><dd>{stats.transport === "local" ? "none (one process)" : stats.transport}</dd>
          <dt>Published</dt><dd>{stats.published}{sample?.rates ? ` (${sample.rates.published}/s)` : ""}</dd>
          <dt>Delivered</dt><dd>{stats.delivered}{sample?.rates ? ` (${sample.rates.delivered}/s)` : ""}</dd>
        </dl>
      )}
      {stats && stats.channels.length === 0 && <p>No channel has members in this process.</p>}
      {stats && stats.channels.length > 0 && (
        <table aria-label="Channels with members">
          <thead>
            <tr><th scope="col">Channel</th><th scope="col">Members here</th><th scope="col">Presence keys</th></tr>
          </thead>
          <tbody>
            {busiest.map((c) => (
              <tr key={c.channel}><td>{c.channel}</td><td>{c.members}</td><td>{c.presence}</td></tr>
            ))}
          </tbody>
        </table>
      )}
      {stats && stats.channels.length > SHOWN && <p>The {SHOWN} channels with the most members of {stats.channels.length}.</p>}
    </>
  );
}

import { monitorEventLoopDelay } from "node:perf_hooks";
import type { Registry } from "prom-client";
import type { Prom } from "./peers.js";

/**
 * Memory, CPU and event-loop lag, read when scraped. prom-client's `collectDefaultMetrics` also
 * watches every garbage collection, which measured at about 15 us per request on a busy app; these
 * cost nothing between scrapes but one event-loop delay histogram (sampled by libuv every 10 ms).
 * Names follow prom-client's, so dashboards built for them work.
 */
export function processMetrics(prom: Prom, registry: Registry): () => void {
  const registers = [registry];
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  new prom.Gauge({
    name: "process_resident_memory_bytes",
    help: "Resident memory size in bytes",
    registers,
    collect() {
      this.set(process.memoryUsage.rss());
    },
  });
  const heap = (name: string, help: string, read: (usage: NodeJS.MemoryUsage) => number) =>
    new prom.Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(read(process.memoryUsage()));
      },
    });
  heap("nodejs_heap_size_total_bytes", "Process heap size from Node.js in bytes", (usage) => usage.heapTotal);
  heap("nodejs_heap_size_used_bytes", "Process heap size used from Node.js in bytes", (usage) => usage.heapUsed);
  heap("nodejs_external_memory_bytes", "Node.js external memory size in bytes", (usage) => usage.external);
  new prom.Counter({
    name: "process_cpu_seconds_total",
    help: "Total user and system CPU time spent in seconds",
    registers,
    collect() {
      const { user, system } = process.cpuUsage();
      this.reset();
      this.inc((user + system) / 1e6);
    },
  });
  new prom.Gauge({
    name: "nodejs_eventloop_lag_seconds",
    help: "Lag of the event loop in seconds, measured when scraped",
    registers,
    async collect() {
      const started = performance.now();
      await new Promise((resolve) => setImmediate(resolve));
      this.set((performance.now() - started) / 1000);
    },
  });
  new prom.Gauge({
    name: "nodejs_eventloop_lag_p99_seconds",
    help: "The 99th percentile of event-loop delay in seconds, since the previous scrape",
    registers,
    collect() {
      this.set(delay.percentile(99) / 1e9);
      delay.reset();
    },
  });
  return () => delay.disable();
}

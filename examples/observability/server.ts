/**
 * `npx tsx examples/observability/server.ts`: the app with traces sent to an OTLP collector and
 * Prometheus metrics at /metrics.
 *
 *   OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318   where spans go (default http://localhost:4318)
 *   OTEL_SERVICE_NAME=notes                              the service the spans name (default trellis-observability)
 *   METRICS_TOKEN=...                                    the scrape token (at least 16 characters)
 *   AUTH_SECRET=...                                      the auth library's secret
 *   DATA_DIR=...                                         the embedded database (memory:// for none kept)
 *   PORT=3000
 */
import { randomBytes } from "node:crypto";
import { embedded } from "trellis/embedded";
import { serve } from "trellis/node";
import { startTracing } from "./tracing.js";
import { createObservedApp } from "./app.js";

// The SDK first: the app's spans go to whatever provider is registered when a request arrives.
const tracing = await startTracing();
const metricsToken = process.env.METRICS_TOKEN ?? randomBytes(18).toString("base64url");
const app = createObservedApp({
  db: embedded({ dataDir: process.env.DATA_DIR ?? ".app/observability" }),
  metricsToken,
  secret: process.env.AUTH_SECRET ?? randomBytes(32).toString("base64url"),
});
const server = await serve(app, { port: Number(process.env.PORT ?? 3000), handleSignals: false });
console.log(`observability example at ${server.url}`);
console.log(`spans of ${tracing.serviceName} go to ${tracing.destination}`);
console.log(`metrics: curl -H "Authorization: Bearer ${metricsToken}" ${server.url}/metrics`);

// Once: a second signal (a supervisor and its process group both sending one) must not end the
// process before the last spans are flushed.
let closing: Promise<void> | undefined;
const shutdown = () =>
  (closing ??= server
    .close()
    .then(() => tracing.shutdown())
    .finally(() => process.exit(0)));
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void shutdown());

import { randomUUID } from "node:crypto";
import { TrellisError, definePlugin, importPeer, missingPeers, type AppPlugin, type ChangeEvent, type SealedApp } from "../../kernel/index.js";
import { deliver, type Delivery } from "./deliver.js";
import { WEBHOOKS_PEER_MISSING, WEBHOOKS_UNKNOWN_TABLE } from "./errors.js";
import { resolveEndpoints, type ResolvedEndpoint, type WebhooksConfig } from "./options.js";

export type { WebhooksConfig, WebhookEndpoint, WebhookEvent } from "./options.js";
export type { Delivery } from "./deliver.js";

/** The job kind that carries deliveries (its jobs show in `_admin.jobs.*` with their attempts). */
export const DELIVERY_JOB = "webhooks.deliver";

/**
 * Outgoing webhooks: every committed change on a subscribed table (the kernel's change feed)
 * becomes one delivery job per endpoint, signed per Standard Webhooks and retried with backoff.
 * A plugin of its own on the `jobs` service alone (it defines a kind and sends, as any plugin
 * may), so it depends on jobs and on nothing else of it.
 */
export function webhooksPlugin(config: WebhooksConfig): AppPlugin {
  const endpoints = resolveEndpoints(config);
  const byUrl = new Map(endpoints.map((endpoint) => [endpoint.url, endpoint]));
  const signers = new Map<string, { sign(id: string, at: Date, payload: string): string }>();
  return definePlugin({
    name: "webhooks",
    stage: "feature",
    dependencies: ["jobs"],
    validate(ctx) {
      if (missingPeers(["standardwebhooks"]).length) {
        throw new TrellisError(WEBHOOKS_PEER_MISSING, `.webhooks() needs the optional package "standardwebhooks", which is not installed. Install it: npm install standardwebhooks`, { plugin: "webhooks", hook: "validate" });
      }
      const unknown = endpoints.flatMap((endpoint) => [...endpoint.tables].filter((table) => !ctx.schema.tables[table]).map((table) => `${table} (${endpoint.url})`));
      if (unknown.length) {
        throw new TrellisError(WEBHOOKS_UNKNOWN_TABLE, `.webhooks() subscribes to tables the latest schema does not have: ${unknown.join(", ")}`, { plugin: "webhooks", hook: "validate" });
      }
    },
    build(ctx) {
      const jobs = ctx.need("jobs");
      jobs.define<Delivery>(
        DELIVERY_JOB,
        { retry: config.retry ?? 5, backoff: config.backoff ?? { delay: 5, exponential: true }, concurrency: config.concurrency ?? 5, timeout: Math.max(...endpoints.map((e) => e.timeout), 1) + 5 },
        async ({ data, signal }) => {
          const endpoint = byUrl.get(data.url);
          // The endpoint left the config since the change: nothing to deliver to.
          if (!endpoint) return { skipped: "endpoint no longer configured" };
          return deliver(data, endpoint, signers.get(endpoint.url)!, signal);
        },
      );
      ctx.hooks.ready.tap(async () => {
        const { Webhook } = await importPeer<typeof import("standardwebhooks")>("standardwebhooks", ".webhooks()");
        for (const endpoint of endpoints) signers.set(endpoint.url, new Webhook(endpoint.secret));
      });
      // A receiver of rows gets the rows before an update too: resources read them when asked.
      const rowTables = new Set(endpoints.filter((endpoint) => endpoint.payload === "rows").flatMap((endpoint) => [...endpoint.tables]));
      if (rowTables.size) ctx.provide("change-before", rowTables);
      let sealed: SealedApp | undefined;
      ctx.hooks.sealed.tap((app) => (sealed = app));
      ctx.hooks.changed.tap((change) => {
        for (const endpoint of endpoints) {
          if (!subscribed(endpoint, change)) continue;
          const tenant = sealed?.service("resource-registry")?.get(change.table)?.tenant;
          // After the commit, outside the request: a failure to queue is the app's to hear about.
          jobs.send(DELIVERY_JOB, delivery(endpoint, change, tenant)).catch((error) => ctx.report(error, "job"));
        }
      });
    },
  });
}

function subscribed(endpoint: ResolvedEndpoint, change: ChangeEvent): boolean {
  return endpoint.tables.has(change.table) && endpoint.events.has(change.op);
}

function delivery(endpoint: ResolvedEndpoint, change: ChangeEvent, tenant: string | undefined): Delivery {
  const data: Delivery["payload"]["data"] = { table: change.table, op: change.op };
  // A tenant resource's write stays in the caller's organization; a raw write spanning several names none.
  const organizations = new Set(tenant ? (change.rows ?? []).map((row) => row[tenant]) : []);
  const [organization] = organizations;
  if (organizations.size === 1 && typeof organization === "string") data.organizationId = organization;
  // Keys go through JSON: a bigint key travels as its decimal string.
  if (change.keys) data.keys = change.keys.map(jsonValue);
  if (endpoint.payload === "rows") {
    if (change.rows) data.rows = change.rows.map(jsonRow);
    if (change.before) data.before = change.before.map((row) => (row ? jsonRow(row) : null));
    if (change.actor) data.actor = { kind: change.actor.kind, userId: change.actor.userId, admin: change.actor.admin };
  }
  return { url: endpoint.url, id: `msg_${randomUUID()}`, payload: { type: `${change.table}.${change.op}`, timestamp: new Date().toISOString(), data } };
}

/** A row as JSON carries it: bigints as decimal strings, bytes as base64, dates as ISO strings (by JSON itself). */
function jsonRow(row: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(row)) out[column] = jsonValue(value);
  return out;
}

function jsonValue(value: unknown): unknown {
  if (typeof value === "bigint") return String(value);
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  return value;
}

import { z } from "zod";
import { isStreamProcedure, type AppRpcContext, type ProcedureBase, type SealedApp } from "../../kernel/index.js";

/** One procedure as the dashboard's runner offers it. */
export interface AdminProcedure {
  /** Dotted, as the client and `/rpc/<a>/<b>` name it. */
  name: string;
  /**
   * The input's JSON Schema (zod's own conversion, the input side: fields with defaults are not
   * required); `null` for a procedure without an input, `{}` for an input with no JSON form (a
   * non-zod schema, a date, a transform), which the runner takes as raw JSON.
   */
  input: Record<string, unknown> | null;
}

/**
 * `_admin.procedures`: what the app serves on `/rpc`, for the runner, which calls each one as the
 * signed-in admin through `/rpc` (so its permission applies as to that user). Left out: `_admin.*`
 * (the dashboard's own views call those) and streams (async generator handlers, event-iterator
 * outputs, resources' `live`), which answer with events, not one value.
 */
export function procedureList(gated: ProcedureBase<AppRpcContext>, sealed: () => SealedApp) {
  let listed: AdminProcedure[] | undefined;
  // The router is sealed before the first call can arrive: one listing serves every call.
  return gated.handler((): AdminProcedure[] => (listed ??= runnable(sealed())));
}

function runnable(sealed: SealedApp): AdminProcedure[] {
  const out: AdminProcedure[] = [];
  for (const [name, procedure] of sealed.procedures) {
    const def = procedure["~orpc"];
    const live = (def.meta as { resource?: { action?: string } }).resource?.action === "live";
    if (name.startsWith("_admin.") || live || isStreamProcedure(procedure)) continue;
    out.push({ name, input: jsonSchemaOf(def.inputSchema) });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

function jsonSchemaOf(schema: unknown): Record<string, unknown> | null {
  if (schema === undefined) return null;
  if (typeof schema !== "object" || schema === null || !("_zod" in schema)) return {};
  try {
    const { $schema: _, ...json } = z.toJSONSchema(schema as z.ZodType, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
    return json;
  } catch {
    return {};
  }
}

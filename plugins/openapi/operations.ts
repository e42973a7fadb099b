import type { AnyProcedure } from "@orpc/server";
import { isStreamProcedure, type ResourceAction } from "../../kernel/index.js";

/** A resource procedure REST serves: the five actions, and `page` and `batch`. */
export type RestAction = ResourceAction | "page" | "batch";

/** What resource procedures carry in their meta (plugins/resources tags them). */
interface ResourceTag {
  table: string;
  action: RestAction | "live";
  key: string;
}

/** One REST operation: a procedure, the method and path it answers on, and how input arrives. */
export interface RestOperation {
  /** The procedure the operation calls through the gate. */
  name: string;
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** The rou3 pattern under the app, `/rest/post/:id`. */
  route: string;
  /** The OpenAPI path, relative to `servers[0].url` (`<baseUrl>/rest`): `/post/{id}`. */
  path: string;
  /** Set for resource actions: the REST shape is the resource's, not the procedure's input. */
  resource?: { name: string; table: string; action: RestAction; key: string };
  /** Path parameter names (a declared route's, or the resource key). */
  params: string[];
  /**
   * A procedure whose meta says `rest: { multipart: true }` (`file.upload`): its own plugin serves
   * `POST /rest/<path>` with a `multipart/form-data` body; this plugin only documents it.
   */
  multipart?: true;
}

const RESOURCE_ROUTES: Record<RestAction, { method: RestOperation["method"]; keyed: boolean; suffix?: string }> = {
  list: { method: "GET", keyed: false },
  page: { method: "POST", keyed: false, suffix: "/page" },
  batch: { method: "POST", keyed: false, suffix: "/batch" },
  create: { method: "POST", keyed: false },
  get: { method: "GET", keyed: true },
  update: { method: "PATCH", keyed: true },
  delete: { method: "DELETE", keyed: true },
};

/**
 * Every procedure the REST surface exposes, per DESIGN.md section 9: resources as
 * `GET/POST /rest/post` and `GET/PATCH/DELETE /rest/post/{id}`; other procedures
 * `POST /rest/<a>/<b>` unless they declare a route. `_admin.*`, `file.*` and streams stay out (live
 * resources, async generator handlers and procedures whose output is an event iterator), but for a
 * procedure whose plugin serves its own multipart route (`file.upload`).
 */
export function restOperations(procedures: ReadonlyMap<string, AnyProcedure>): RestOperation[] {
  const operations: RestOperation[] = [];
  for (const [name, procedure] of procedures) {
    const def = procedure["~orpc"];
    const multipart = (def.meta as { rest?: { multipart?: boolean } }).rest?.multipart === true;
    if (multipart) {
      const path = `/${name.split(".").join("/")}`;
      operations.push({ name, method: "POST", route: `/rest${path}`, path, params: [], multipart });
      continue;
    }
    if (name.startsWith("_admin.") || name.startsWith("file.")) continue;
    // A stream answers on /rpc (server-sent events); plain JSON has nothing to say for it.
    if (isStreamProcedure(procedure)) continue;
    const tag = (def.meta as { resource?: ResourceTag }).resource;
    if (tag) {
      if (tag.action === "live") continue;
      const resourceName = name.slice(0, name.lastIndexOf("."));
      const { method, keyed, suffix = "" } = RESOURCE_ROUTES[tag.action];
      const base = `/${resourceName.split(".").join("/")}${suffix}`;
      const resource = { name: resourceName, table: tag.table, action: tag.action, key: tag.key };
      operations.push({
        name,
        method,
        route: `/rest${base}${keyed ? "/:key" : ""}`,
        path: `${base}${keyed ? `/{${tag.key}}` : ""}`,
        resource,
        params: keyed ? [tag.key] : [],
      });
      // The list's arguments as a JSON body too, for what a query string carries badly (nearest's vector).
      if (tag.action === "list") operations.push({ name, method: "POST", route: `/rest${base}/list`, path: `${base}/list`, resource, params: [] });
      continue;
    }
    const declared = def.route;
    if (declared.path) {
      const method = (declared.method ?? "POST").toUpperCase() as RestOperation["method"];
      const params = [...declared.path.matchAll(/\{\+?([^}]+)\}/g)].map((match) => match[1]!);
      operations.push({
        name,
        method,
        route: `/rest${declared.path.replace(/\{\+?([^}]+)\}/g, ":$1")}`,
        path: declared.path.replace(/\{\+([^}]+)\}/g, "{$1}"),
        params,
      });
      continue;
    }
    const path = `/${name.split(".").join("/")}`;
    operations.push({ name, method: "POST", route: `/rest${path}`, path, params: [] });
  }
  return operations;
}

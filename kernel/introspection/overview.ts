import type { KernelView } from "../options.js";
import type { OrderedPlugin } from "../order.js";
import type { TieredRouter } from "../router.js";
import type { DatabaseAbout, DatabaseKind } from "../contracts/resources.js";

/** What a built app is, in the terms its start banner uses. */
export interface AppOverview {
  name: string;
  database: { kind: DatabaseKind } & Partial<DatabaseAbout>;
  /** The latest schema version, and the migrations this process applied (undefined before the migrator ran). */
  schema: { version: string | undefined; versions: number; applied: readonly string[] | undefined };
  /** Plugin names in resolved order. */
  plugins: string[];
  /** Mounted paths grouped by who mounted them (a plugin's name, `app` for `.route()`, `rpc`). */
  surfaces: { owner: string; routes: string[] }[];
  procedures: number;
}

export function overview(kernel: KernelView, ordered: readonly OrderedPlugin[], router: TieredRouter, procedures: number, applied: readonly string[] | undefined): AppOverview {
  const { db, name } = kernel.options;
  const about = db.about ?? (db.dialect as { about?: DatabaseAbout }).about;
  const surfaces = new Map<string, string[]>();
  for (const { owner, method, path } of router.owned()) {
    const routes = surfaces.get(owner) ?? surfaces.set(owner, []).get(owner)!;
    const route = method === "ALL" || (owner === "rpc" && method === "POST") ? path : `${method} ${path}`;
    if (!routes.includes(route)) routes.push(route);
  }
  return {
    name: name ?? "trellis",
    database: { kind: db.kind, ...about },
    schema: { version: kernel.schemas.at(-1)?.version, versions: kernel.schemas.length, applied },
    plugins: ordered.map(({ plugin }) => plugin.name),
    surfaces: [...surfaces].map(([owner, routes]) => ({ owner, routes })),
    procedures,
  };
}

import { TrellisError, definePlugin, missingPeers, installLine, type AppPlugin, type RouteDefinition, type SealedApp } from "../../kernel/index.js";
import { restOperations } from "./operations.js";
import { DOCS_PACKAGE, docsRoutes } from "./docs-page.js";
import { OPENAPI_PEER_MISSING } from "./errors.js";
import type { RestRuntime } from "./rest.js";

export interface OpenapiConfig {
  /**
   * Gate by flag: `false` mounts nothing.
   * @default true
   */
  enabled?: boolean;
  /**
   * The reference page rendering the document (Swagger UI from `swagger-ui-dist`, served by the
   * app). `false` omits it.
   * @default { path: "/docs" }
   */
  docs?: boolean | { path?: string };
}

/** The optional peers the REST surface and the document need (SPEC.md, Endpoints rule 2). */
const PEERS = ["@orpc/openapi", "@orpc/zod", "@orpc/json-schema"];
const DOCUMENT_PATH = "/openapi.json";
/**
 * The REST runtime and the document's builders, loaded by the first app that needs them and kept for
 * the process: a later app (the next test, a dev reload) does not ask the module loader again.
 */
let modules: Promise<[typeof import("./rest.js"), typeof import("./document.js"), typeof import("./auth-paths.js")]> | undefined;
const restModules = () => (modules ??= Promise.all([import("./rest.js"), import("./document.js"), import("./auth-paths.js")]));

/**
 * `.openapi()`: the plain-JSON REST surface under `/rest/**` and its OpenAPI 3.1 document at
 * `/openapi.json`, plus a reference page. Stage `surface`: routes are mounted for every procedure
 * that exists once features and user plugins built; the document is generated once, at its first
 * request, from the sealed app. Requests run procedures only through the kernel's gate.
 */
export function openapiPlugin(config: OpenapiConfig = {}): AppPlugin {
  const docsPath = config.docs === false ? undefined : (typeof config.docs === "object" && config.docs.path) || "/docs";
  let runtime: RestRuntime | undefined;
  // Made at the first request for it, then kept: most apps (and every test) never ask, and
  // converting every procedure's schemas costs tens of milliseconds at start.
  let document: Promise<string> | undefined;
  let makeDocument: (() => Promise<string>) | undefined;
  return definePlugin({
    name: "openapi",
    stage: "surface",
    validate() {
      if (config.enabled === false) return;
      const missing = missingPeers([...PEERS, ...(docsPath ? [DOCS_PACKAGE] : [])]);
      if (missing.length > 0) {
        const hint = missing.includes(DOCS_PACKAGE) ? ' (or pass docs: false to .openapi() for no reference page)' : "";
        throw new TrellisError(OPENAPI_PEER_MISSING, `.openapi() needs the optional peer packages ${missing.map((name) => `"${name}"`).join(", ")}${hint}. Install them: ${installLine(missing)}`, {
          plugin: "openapi",
          hook: "validate",
        });
      }
    },
    build(ctx) {
      if (config.enabled === false) return;
      const operations = restOperations(ctx.procedures);
      let sealed: SealedApp | undefined;
      ctx.hooks.sealed.tap((app) => (sealed = app));
      // The peers load asynchronously, in `ready` (once, after every plugin built, before the first
      // request). The runtime is made at the first REST request and the document at the first request
      // for it: an app, or a test, that never asks pays nothing for them at start.
      let make: (() => RestRuntime) | undefined;
      const rest = () => (runtime ??= make!());
      ctx.hooks.ready.tap(async () => {
        if (make) return;
        const [{ restRuntime }, { openapiDocument }, { authPaths }] = await restModules();
        make = () => restRuntime(sealed!, operations);
        makeDocument = async () => JSON.stringify(openapiDocument(sealed!, operations, rest().convert, await authPaths(sealed!, sealed!.schema.auth ? "session" : undefined)));
      });
      // A multipart operation's route is its own plugin's (it streams the body); only the document lists it here.
      const routes: RouteDefinition[] = operations.filter((operation) => !operation.multipart).map((operation) => ({
        method: operation.method,
        path: operation.route,
        handler: (event, context) => rest().handle(operation, event, context),
      }));
      routes.push({
        method: "GET",
        path: DOCUMENT_PATH,
        context: false,
        handler: async () => {
          // A failed generation is not kept: the next request tries again (and reports its error).
          document ??= makeDocument!().catch((error: unknown) => {
            document = undefined;
            throw error;
          });
          return new Response(await document, { headers: { "content-type": "application/json" } });
        },
      });
      if (docsPath) routes.push(...docsRoutes(docsPath, DOCUMENT_PATH, ctx.resources.name ?? "trellis"));
      return { routes };
    },
  });
}

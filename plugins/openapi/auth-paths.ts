import type { SealedApp } from "../../kernel/index.js";

type Json = Record<string, any>;

/** Where the auth plugin mounts the library, and the operations a reader needs to try the API. */
const AUTH_BASE = "/api/auth";
const OPERATIONS: readonly { path: string; method: "get" | "post"; access: "public" | "session"; example?: Json }[] = [
  { path: "/sign-up/email", method: "post", access: "public", example: { name: "Ada", email: "ada@example.com", password: "correct-horse-battery-staple" } },
  { path: "/sign-in/email", method: "post", access: "public", example: { email: "ada@example.com", password: "correct-horse-battery-staple" } },
  { path: "/get-session", method: "get", access: "public" },
  { path: "/sign-out", method: "post", access: "session", example: {} },
];

/**
 * Sign-up, sign-in, get-session and sign-out as better-auth's own OpenAPI generator describes them
 * (its `openAPI` plugin's schema endpoint, called directly: the plugin is not mounted, so no extra
 * route or reference page appears), adjusted to this document: paths under `/api/auth` with the
 * app's origin as their server (the document's server is `/rest`), operation ids and schema names
 * prefixed so they cannot meet a resource's, 3.0's `nullable` spelled the 3.1 way, the session
 * cookie as the credential, and request examples a reader can send as they are.
 */
export async function authPaths(sealed: SealedApp, sessionScheme: string | undefined): Promise<{ paths: Json; schemas: Json }> {
  const auth = sealed.service("auth") as { $context: Promise<unknown> } | undefined;
  if (!auth) return { paths: {}, schemas: {} };
  const { openAPI } = await import("better-auth/plugins");
  const generate = openAPI().endpoints.generateOpenAPISchema as unknown as (ctx: { context: unknown }) => Promise<Json>;
  const generated = await generate({ context: await auth.$context });
  const server = [{ url: sealed.baseUrl?.replace(/\/$/, "") || "/" }];
  const paths: Json = {};
  const used = new Set<string>();
  for (const { path, method, access, example } of OPERATIONS) {
    const operation = generated.paths?.[path]?.[method] as Json | undefined;
    if (!operation) continue;
    const item: Json = rename(operation, used);
    item.operationId = `auth.${operation.operationId ?? path.slice(1).replace(/\W+/g, "-")}`;
    item.tags = ["auth"];
    item.security = access === "public" || !sessionScheme ? [{}] : [{ [sessionScheme]: [] }];
    if (example && item.requestBody?.content?.["application/json"]) item.requestBody.content["application/json"].example = example;
    if (item.parameters?.length === 0) delete item.parameters;
    paths[`${AUTH_BASE}${path}`] = { servers: server, [method]: item };
  }
  const schemas: Json = {};
  for (const name of used) if (generated.components?.schemas?.[name]) schemas[`Auth${name}`] = rename(generated.components.schemas[name], new Set());
  return { paths, schemas };
}

/** A copy with `$ref`s to `Auth<Name>` (collecting the names) and `nullable: true` as a type union. */
function rename(value: unknown, used: Set<string>): any {
  if (Array.isArray(value)) return value.map((item) => rename(item, used));
  if (typeof value !== "object" || value === null) return value;
  const out: Json = {};
  for (const [key, child] of Object.entries(value)) {
    if (key === "$ref" && typeof child === "string" && child.startsWith("#/components/schemas/")) {
      const name = child.slice("#/components/schemas/".length);
      used.add(name);
      out.$ref = `#/components/schemas/Auth${name}`;
    } else if (key !== "nullable") out[key] = rename(child, used);
  }
  if ((value as Json).nullable === true && typeof out.type === "string") out.type = [out.type, "null"];
  // A `$ref` beside other keywords (`{ type: "object", $ref }`) is the reference alone.
  if (out.$ref) return { $ref: out.$ref, ...(out.description && { description: out.description }) };
  return out;
}

// Module hooks of `trellis dev` (registered by presets/cli/dev/supervisor.ts): each reload imports the
// server module with `?trellis-dev=<n>`, and every project file it reaches inherits that query, so the
// project's code is evaluated afresh while packages (Trellis, PGlite, ...) stay loaded once.
// Each project file is reported to the supervisor, which watches it.
let root = "";
let port;

export function initialize(data) {
  root = data.root;
  port = data.port;
}

const GENERATION = /[?&]trellis-dev=(\d+)/;

export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  const { url } = resolved;
  if (!url.startsWith(root) || url.includes("/node_modules/")) return resolved;
  const own = GENERATION.exec(url);
  const inherited = GENERATION.exec(context.parentURL ?? "");
  port?.postMessage(url.split("?")[0]);
  if (own || !inherited) return resolved;
  return { ...resolved, url: `${url}${url.includes("?") ? "&" : "?"}trellis-dev=${inherited[1]}` };
}

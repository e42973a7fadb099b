import { processEnv } from "../kernel/index.js";

/** Code of the start-up warning below, listed in docs/errors.md. */
export const SERVE_BASE_URL_LOCAL = "SERVE_BASE_URL_LOCAL";

const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]", "0.0.0.0"]);

/**
 * In production a `baseUrl` on localhost is almost always a forgotten setting: the auth library puts
 * it in links it mails and trusts it as an origin, so sign-in from the real address fails or mails
 * lead nowhere. A warning, not an error: a local production build is legitimate.
 */
export function warnLocalBaseUrl(baseUrl: string | undefined, write: (line: string) => void = (line) => process.stderr.write(line)): boolean {
  if (processEnv().NODE_ENV !== "production" || !baseUrl) return false;
  let host: string;
  try {
    host = new URL(baseUrl).hostname;
  } catch {
    return false;
  }
  if (!LOCAL_HOSTS.has(host) && !host.endsWith(".localhost")) return false;
  write(`[trellis] ${SERVE_BASE_URL_LOCAL}: baseUrl is ${baseUrl} while NODE_ENV=production; set it to the address users reach the app at (a project made by "trellis new" reads it from APP_BASE_URL)\n`);
  return true;
}

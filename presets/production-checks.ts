import { isLoopbackHost, processEnv } from "../kernel/index.js";

/** Code of the start-up warning below, listed in docs/errors.md. */
export const SERVE_BASE_URL_LOCAL = "SERVE_BASE_URL_LOCAL";

/**
 * In production a `baseUrl` on localhost is almost always a forgotten setting: the auth library puts
 * it in links it mails and trusts it as an origin, so sign-in from the real address fails or mails
 * lead nowhere. A warning, not an error: a local production build is legitimate.
 */
export function warnLocalBaseUrl(baseUrl: string | undefined, write: (line: string) => void = (line) => process.stderr.write(line)): boolean {
  if (processEnv().NODE_ENV !== "production" || !baseUrl || !isLocalBaseUrl(baseUrl)) return false;
  write(`[trellis] ${SERVE_BASE_URL_LOCAL}: baseUrl is ${baseUrl} while NODE_ENV=production; set it to the address users reach the app at (a project made by "trellis new" reads it from APP_BASE_URL)\n`);
  return true;
}

/** Whether `baseUrl` points at this machine (false when it is no URL). */
export function isLocalBaseUrl(baseUrl: string): boolean {
  let host: string;
  try {
    host = new URL(baseUrl).hostname;
  } catch {
    return false;
  }
  // 0.0.0.0 is no one's address, only a listener's: as forgotten a setting as localhost.
  return isLoopbackHost(host) || host === "0.0.0.0";
}

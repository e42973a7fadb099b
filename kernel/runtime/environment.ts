/**
 * The process environment, or an empty one on runtimes without `process` (edge workers), where
 * configuration comes from the platform's bindings instead.
 */
export function processEnv(): Record<string, string | undefined> {
  return typeof process === "undefined" || !process.env ? {} : process.env;
}

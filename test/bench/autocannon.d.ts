/** The slice of autocannon's API the HTTP benchmark uses (it ships no types). */
declare module "autocannon" {
  namespace autocannon {
    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string;
      setupRequest?: (request: any) => any;
    }
    interface Options {
      url: string;
      connections?: number;
      duration?: number;
      /** Stop after this many requests instead of after `duration`. */
      amount?: number;
      requests?: Request[];
      /** Drive from this many worker threads instead of the calling thread. */
      workers?: number;
    }
    interface Result {
      requests: { average: number; total: number };
      latency: { p50: number; p99: number; max: number };
      non2xx: number;
      errors: number;
    }
  }
  function autocannon(options: autocannon.Options): Promise<autocannon.Result>;
  export default autocannon;
}

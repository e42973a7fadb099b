// A browser for OAuth flows: it keeps one cookie jar per origin and follows redirects itself, sending
// requests for the app's origin through `app.handle` and the rest over the network, so a test can
// stop at any hop, tamper with it, or deliver it twice.

type Handler = { handle(request: Request): Promise<Response> };

export interface Hop {
  url: string;
  status: number;
  location?: string;
}

export class OAuthBrowser {
  readonly #jars = new Map<string, Map<string, string>>();
  constructor(
    readonly app: Handler,
    readonly appOrigin: string,
  ) {}

  cookies(origin: string): string {
    return [...(this.#jars.get(origin) ?? [])].map(([name, value]) => `${name}=${value}`).join("; ");
  }

  /** One request, cookies sent and kept, no redirect followed. */
  async request(url: string | URL, init: RequestInit = {}): Promise<Response> {
    const target = new URL(url);
    const headers = new Headers(init.headers);
    const cookie = this.cookies(target.origin);
    if (cookie) headers.set("cookie", cookie);
    const response =
      target.origin === this.appOrigin ? await this.app.handle(new Request(target, { ...init, headers })) : await fetch(target, { ...init, headers, redirect: "manual" });
    const jar = this.#jars.get(target.origin) ?? new Map<string, string>();
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(";");
      const at = pair.indexOf("=");
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      const expired = value === "" || attributes.some((attribute) => /^\s*max-age=0\s*$/i.test(attribute) || /^\s*expires=Thu, 01 Jan 1970/i.test(attribute));
      if (expired) jar.delete(name);
      else jar.set(name, value);
    }
    this.#jars.set(target.origin, jar);
    return response;
  }

  /**
   * Follows redirects from `url` until `stop(url)` holds for the next hop (that hop is not requested)
   * or a response is not a redirect. Returns every hop made and where it stopped.
   */
  async follow(url: string | URL, stop: (next: URL) => boolean = () => false): Promise<{ hops: Hop[]; stoppedAt?: URL; last: Response }> {
    const hops: Hop[] = [];
    let current = new URL(url);
    for (let i = 0; i < 20; i++) {
      const response = await this.request(current);
      const location = response.headers.get("location") ?? undefined;
      hops.push({ url: current.href, status: response.status, location });
      if (response.status < 300 || response.status >= 400 || !location) return { hops, last: response };
      await response.arrayBuffer();
      const next = new URL(location, current);
      if (stop(next)) return { hops, stoppedAt: next, last: response };
      current = next;
    }
    throw new Error(`more than 20 redirects from ${url}`);
  }
}

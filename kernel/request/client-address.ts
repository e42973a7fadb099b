import type { RequestEvent } from "../event.js";

/**
 * Which proxies may report the client's address in `X-Forwarded-For`:
 * - `false` (or `0`, or `[]`): none; the socket's peer is the client.
 * - a number `n`: the `n` hops nearest the server are proxies (`1`: one load balancer in front).
 * - a list of addresses or CIDR ranges: hops inside them are proxies, wherever they sit.
 * - `true`: every hop is; the leftmost address wins. Only safe when the proxy overwrites the header.
 */
export type TrustProxy = boolean | number | readonly string[];

/** Decides a request's client address from the socket's peer and `X-Forwarded-For`. */
export type ClientAddressRule = (peer: string | undefined, forwardedFor: string | null) => string | undefined;

/**
 * The one client-address rule, compiled once (a transport calls it per request, without copying the
 * request). The chain is `X-Forwarded-For`'s entries followed by the peer; it is read from the right,
 * skipping trusted proxies, so a client reached directly cannot name its own address. A forwarded
 * entry that is not an IP address is never used: the nearest trusted hop stands in for it.
 * Throws on a setting that cannot be applied (a negative hop count, a malformed range).
 */
export function clientAddressRule(trust: TrustProxy = false): ClientAddressRule {
  if (trust === false || trust === 0 || (Array.isArray(trust) && trust.length === 0)) return (peer) => unmapped(peer);
  if (trust === true) {
    return (peer, forwardedFor) => {
      const first = forwardedFor?.split(",", 1)[0].trim();
      return first && isIpAddress(first) ? unmapped(first) : unmapped(peer);
    };
  }
  const isProxy = typeof trust === "number" ? hopCounter(trust) : rangeMatcher(trust as readonly string[]);
  return (peer, forwardedFor) => {
    const chain = forwardedFor ? forwardedFor.split(",").map((entry) => entry.trim()).filter(Boolean) : [];
    chain.push(peer ?? "");
    let index = chain.length - 1;
    while (index > 0 && isProxy(chain[index], chain.length - 1 - index)) index--;
    const candidate = unmapped(chain[index]);
    if (candidate && isIpAddress(candidate)) return candidate;
    return unmapped(chain[index + 1] ?? peer);
  };
}

/**
 * The caller's address as every plugin reads it (the rate limit, the auth library's own limiter,
 * the address stored on sessions): what the transport decided (`handle(request, { clientAddress })`,
 * which `serve()` fills), else, for a request handed over without one, the first `X-Forwarded-For`
 * entry, then `X-Real-IP` (SPEC's fallback; whoever calls `handle()` then vouches for the headers).
 */
export function callerAddress(event: RequestEvent): string | undefined {
  // Empty when the transport knows the request came over a socket it can no longer name.
  if (event.clientAddress !== undefined) return event.clientAddress || undefined;
  const first = event.headers.get("x-forwarded-for")?.split(",", 1)[0].trim();
  if (first && isIpAddress(first)) return unmapped(first);
  const real = event.headers.get("x-real-ip")?.trim();
  return real && isIpAddress(real) ? unmapped(real) : undefined;
}

/**
 * Who a per-address count is kept for: the caller's address (`callerAddress`), except that an IPv6
 * client counts by its /64 (`2001:db8:1:2::/64`). A client is handed a whole /64 and chooses the low
 * bits of its source address freely, so counting single IPv6 addresses would give it a fresh budget
 * per request. The rate limit, live streams' per-caller cap and mail's per-client limit all key on
 * it (the auth library's own limiter counts IPv6 by /64 too). Undefined when no address is known.
 */
export function callerBucket(event: RequestEvent): string | undefined {
  const address = unmapped(callerAddress(event));
  if (!address?.includes(":")) return address;
  const network = addressPrefix(address, { ipv4: 32, ipv6: 64 });
  return network ? `${network}::/64` : address;
}

/**
 * The network `address` belongs to, as the leading parts of the address that `bits` cover: the
 * first `ipv4 / 8` octets of an IPv4 address (`10.1` for `10.1.2.3` at 16 bits), or the first
 * `ipv6 / 16` groups of an IPv6 one, in lower-case hex without leading zeros (`2001:db8:1` for
 * `2001:0DB8:1:2::3` at 48 bits; a group the address leaves out is `0`). An IPv4-mapped address
 * (`::ffff:10.1.2.3`) is the IPv4 one. Undefined when `address` is no IP address. The one reading
 * of an address's network: the per-address counts' IPv6 /64 (`callerBucket`) and the network
 * mail's new-sign-in notice remembers a device by.
 * Throws when `bits` does not end on an octet (IPv4) or a group (IPv6), whatever `address` is.
 */
export function addressPrefix(address: string, bits: { ipv4: number; ipv6: number }): string | undefined {
  const whole = (width: number, step: number, max: number) => Number.isInteger(width) && width >= 0 && width <= max && width % step === 0;
  if (!whole(bits.ipv4, 8, 32) || !whole(bits.ipv6, 16, 128)) {
    throw new RangeError(`addressPrefix: ipv4 ${bits.ipv4} and ipv6 ${bits.ipv6} must be whole octets (up to 32 bits) and whole groups (up to 128)`);
  }
  const bytes = addressBytes(unmapped(address) ?? "");
  if (!bytes) return undefined;
  if (bytes.length === 4) return [...bytes.subarray(0, bits.ipv4 / 8)].join(".");
  return Array.from({ length: bits.ipv6 / 16 }, (_, i) => ((bytes[i * 2]! << 8) | bytes[i * 2 + 1]!).toString(16)).join(":");
}

/** `::ffff:10.0.0.1` is the IPv4 client `10.0.0.1` seen on a dual-stack socket. */
function unmapped(address: string | undefined): string | undefined {
  if (!address) return undefined;
  return address.toLowerCase().startsWith("::ffff:") && isIpv4(address.slice(7)) ? address.slice(7) : address;
}

function hopCounter(hops: number): (address: string, position: number) => boolean {
  if (!Number.isInteger(hops) || hops < 0) throw new RangeError(`trustProxy: a hop count must be a whole number of proxies, got ${hops}`);
  return (_address, position) => position < hops;
}

function rangeMatcher(list: readonly string[]): (address: string) => boolean {
  const ranges = list.map((entry) => {
    const range = parseRange(entry);
    if (!range) throw new RangeError(`trustProxy: "${entry}" is not an IP address or CIDR range`);
    return range;
  });
  return (address) => {
    const bytes = addressBytes(unmapped(address) ?? "");
    return bytes !== undefined && ranges.some((range) => inRange(bytes, range));
  };
}

interface Range {
  bytes: Uint8Array;
  prefix: number;
}

function parseRange(entry: string): Range | undefined {
  const [address, prefixText, extra] = entry.trim().split("/");
  const bytes = addressBytes(unmapped(address) ?? "");
  if (!bytes || extra !== undefined) return undefined;
  const bits = bytes.length * 8;
  if (prefixText === undefined) return { bytes, prefix: bits };
  const prefix = Number(prefixText);
  return /^\d+$/.test(prefixText) && prefix <= bits ? { bytes, prefix } : undefined;
}

function inRange(bytes: Uint8Array, range: Range): boolean {
  if (bytes.length !== range.bytes.length) return false;
  for (let bit = 0; bit < range.prefix; bit += 8) {
    const width = Math.min(8, range.prefix - bit);
    const mask = (0xff << (8 - width)) & 0xff;
    if ((bytes[bit / 8] & mask) !== (range.bytes[bit / 8] & mask)) return false;
  }
  return true;
}

/**
 * Whether `host` names this machine: `localhost` and its subdomains (RFC 6761), 127.0.0.0/8 and
 * `::1`, IPv4-mapped or not. Takes a URL's `hostname` (IPv6 in brackets) or a bare address such as
 * `callerAddress` gives. The one loopback test of Trellis: origins trusted in development,
 * development-only routes, and the warnings about a local `baseUrl` in production.
 */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  if (name === "localhost" || name.endsWith(".localhost")) return true;
  const bytes = addressBytes(name);
  if (!bytes) return false;
  if (bytes.length === 4) return bytes[0] === 127;
  const zeros = (end: number) => bytes.subarray(0, end).every((byte) => byte === 0);
  if (zeros(10) && bytes[10] === 0xff && bytes[11] === 0xff) return bytes[12] === 127;
  return zeros(15) && bytes[15] === 1;
}

export function isIpAddress(value: string): boolean {
  return addressBytes(value) !== undefined;
}

function isIpv4(value: string): boolean {
  return ipv4Bytes(value) !== undefined;
}

/** 4 or 16 bytes; undefined when the text is no IP address. No `node:net`: the kernel runs on edge runtimes too. */
function addressBytes(value: string): Uint8Array | undefined {
  return value.includes(":") ? ipv6Bytes(value) : ipv4Bytes(value);
}

function ipv4Bytes(value: string): Uint8Array | undefined {
  const parts = value.split(".");
  if (parts.length !== 4 || !parts.every((part) => /^(0|[1-9]\d{0,2})$/.test(part) && Number(part) <= 255)) return undefined;
  return Uint8Array.from(parts.map(Number));
}

function ipv6Bytes(value: string): Uint8Array | undefined {
  const zoneless = value.split("%", 1)[0];
  const halves = zoneless.split("::");
  if (halves.length > 2) return undefined;
  const groups = (text: string) => (text === "" ? [] : text.split(":"));
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  // An embedded IPv4 tail (`::ffff:10.0.0.1`) counts as two groups.
  const last = (halves.length === 2 ? tail : head).at(-1);
  const v4 = last?.includes(".") ? ipv4Bytes(last) : undefined;
  if (last?.includes(".") && !v4) return undefined;
  const words = [...head, ...tail].filter((group) => !group.includes("."));
  if (!words.every((group) => /^[0-9a-f]{1,4}$/i.test(group))) return undefined;
  const count = words.length + (v4 ? 2 : 0);
  if (halves.length === 1 ? count !== 8 : count > 7) return undefined;
  const bytes = new Uint8Array(16);
  const write = (list: string[], start: number) => list.forEach((group, i) => {
    const word = parseInt(group, 16);
    bytes[start + i * 2] = word >> 8;
    bytes[start + i * 2 + 1] = word & 0xff;
  });
  const headWords = head.filter((group) => !group.includes("."));
  const tailWords = tail.filter((group) => !group.includes("."));
  write(headWords, 0);
  const tailBytes = tailWords.length * 2 + (v4 ? 4 : 0);
  write(tailWords, 16 - tailBytes);
  if (v4) bytes.set(v4, 12);
  return bytes;
}

import { request as httpRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { addressPrefix, clientAddressRule, isLoopbackHost } from "../../kernel/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { serve, type RunningServer, type ServeOptions } from "../../presets/node.js";
import { sqliteMemory } from "../support/app.js";
import { ORIGIN } from "../support/auth.js";

/** Two clients on one machine: every 127/8 address is loopback, so each can be its own source. */
const ALICE = "127.0.0.1";
const BOB = "127.0.0.2";

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** One HTTP request from a chosen source address. */
function send(server: RunningServer, from: string, method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<Reply> {
  const url = new URL(path, server.url);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method,
        localAddress: from,
        headers: { ...(payload ? { "content-type": "application/json", "content-length": Buffer.byteLength(payload) } : {}), ...headers },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text ? JSON.parse(text) : undefined }));
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

const servers: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function start(app: App<any, any, any>, options: ServeOptions = {}): Promise<RunningServer> {
  const server = await serve(app, { port: 0, hostname: "127.0.0.1", handleSignals: false, ...options });
  servers.push(server);
  return server;
}

const whoApp = () =>
  new App({ db: sqliteMemory(), rateLimit: { max: 2, windowMs: 60_000 } })
    .route("GET", "/who", (event) => ({ address: event.clientAddress ?? null }))
    .procedure("ping", (base) => base.handler(() => "pong"));

const ping = (server: RunningServer, from: string, headers: Record<string, string> = {}) => send(server, from, "POST", "/rpc/ping", headers, {});

describe("the client address rule", () => {
  it("without trustProxy is the peer, whatever the headers say", () => {
    const rule = clientAddressRule(false);
    expect(rule("10.0.0.9", "1.2.3.4")).toBe("10.0.0.9");
    expect(rule("::ffff:10.0.0.9", null)).toBe("10.0.0.9");
    expect(clientAddressRule(0)("10.0.0.9", "1.2.3.4")).toBe("10.0.0.9");
    expect(clientAddressRule([])("10.0.0.9", "1.2.3.4")).toBe("10.0.0.9");
  });

  it("with a hop count skips that many proxies from the right", () => {
    const one = clientAddressRule(1);
    // The client put a made-up entry first; the proxy appended the address it saw.
    expect(one("10.0.0.1", "6.6.6.6, 203.0.113.7")).toBe("203.0.113.7");
    expect(one("10.0.0.1", null)).toBe("10.0.0.1");
    expect(clientAddressRule(2)("10.0.0.2", "6.6.6.6, 203.0.113.7, 10.0.0.1")).toBe("203.0.113.7");
    // Fewer entries than hops: the leftmost one.
    expect(clientAddressRule(3)("10.0.0.1", "203.0.113.7")).toBe("203.0.113.7");
    // Garbage where the client should be: the nearest proxy stands in (one bucket, never a chosen one).
    expect(one("10.0.0.1", "junk")).toBe("10.0.0.1");
  });

  it("with a list of proxies skips the trusted ones wherever they sit", () => {
    const rule = clientAddressRule(["10.0.0.0/8", "2001:db8::/32", "192.0.2.7"]);
    expect(rule("10.1.2.3", "6.6.6.6, 203.0.113.7, 192.0.2.7")).toBe("203.0.113.7");
    expect(rule("2001:db8::1", "2001:db8::5, 2001:db9::9")).toBe("2001:db9::9");
    expect(rule("::ffff:10.0.0.1", "198.51.100.4")).toBe("198.51.100.4");
    // A peer outside the list is the client: its headers are not believed.
    expect(rule("203.0.113.50", "6.6.6.6")).toBe("203.0.113.50");
  });

  it("with true takes the leftmost valid forwarded address", () => {
    expect(clientAddressRule(true)("10.0.0.1", "203.0.113.7, 10.0.0.3")).toBe("203.0.113.7");
    expect(clientAddressRule(true)("10.0.0.1", "nope")).toBe("10.0.0.1");
  });

  it("refuses settings it cannot apply", () => {
    expect(() => clientAddressRule(-1)).toThrow(/hop count/);
    expect(() => clientAddressRule(["10.0.0.0/33"])).toThrow(/"10.0.0.0\/33" is not an IP address or CIDR range/);
    expect(() => clientAddressRule(["proxy.internal"])).toThrow(/not an IP address/);
  });
});

describe("isLoopbackHost", () => {
  it("names this machine by URL hostname or bare address, and nothing that only starts like it", () => {
    for (const host of ["localhost", "LOCALHOST", "app.localhost", "127.0.0.1", "127.8.9.10", "[::1]", "::1", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1", "[::ffff:7f00:1]"]) expect([host, isLoopbackHost(host)]).toEqual([host, true]);
    for (const host of ["localhost.example.com", "127.0.0.1.example.com", "example.com", "0.0.0.0", "10.0.0.1", "[::2]", "::ffff:10.0.0.1", "128.0.0.1", ""]) expect([host, isLoopbackHost(host)]).toEqual([host, false]);
  });
});

describe("addressPrefix", () => {
  it("gives an address's network as its leading octets or groups, whatever way the address is written", () => {
    const network = (address: string) => addressPrefix(address, { ipv4: 16, ipv6: 48 });
    expect(["198.51.100.7", "::ffff:198.51.7.9", "::FFFF:198.51.0.1"].map(network)).toEqual(["198.51", "198.51", "198.51"]);
    expect(["2001:db8:1:2::1", "2001:0DB8:0001:0002:0:0:0:ffff", "2001:db8:1::", "2001:db8::", "::1", "::2:3:4:5:6:7:8", "fe80::1%eth0"].map(network)).toEqual([
      "2001:db8:1",
      "2001:db8:1",
      "2001:db8:1",
      "2001:db8:0",
      "0:0:0",
      "0:2:3",
      "fe80:0:0",
    ]);
    expect(["", "unknown", "256.1.1.1", "1:2:3", "g::1"].map(network)).toEqual([undefined, undefined, undefined, undefined, undefined]);
    expect(addressPrefix("192.0.2.1", { ipv4: 32, ipv6: 64 })).toBe("192.0.2.1");
    expect(addressPrefix("2001:db8:1:2:aaaa::1", { ipv4: 32, ipv6: 64 })).toBe("2001:db8:1:2");
    expect(() => addressPrefix("192.0.2.1", { ipv4: 20, ipv6: 48 })).toThrow("addressPrefix: ipv4 20 and ipv6 48 must be whole octets (up to 32 bits) and whole groups (up to 128)");
    // Refused whatever the address: a setting is checked before the first IPv6 client comes.
    expect(() => addressPrefix("192.0.2.1", { ipv4: 16, ipv6: 56 })).toThrow(/ipv6 56/);
  });
});

describe("client address under serve()", () => {
  it("gives two clients two buckets, and a direct client cannot pick its own with X-Forwarded-For", async () => {
    const server = await start(whoApp());
    expect((await send(server, BOB, "GET", "/who", { "x-forwarded-for": "6.6.6.6" })).body).toEqual({ address: BOB });
    // Alice claims to be Bob, then rotates made-up addresses: one bucket, hers.
    expect((await ping(server, ALICE, { "x-forwarded-for": BOB })).status).toBe(200);
    expect((await ping(server, ALICE, { "x-forwarded-for": "1.1.1.1", "x-real-ip": "2.2.2.2" })).status).toBe(200);
    const limited = await ping(server, ALICE, { "x-forwarded-for": "3.3.3.3" });
    expect(limited.status).toBe(429);
    expect(limited.headers["retry-after"]).toBeDefined();
    // Bob is untouched by all of that.
    const bob = await ping(server, BOB);
    expect(bob.status).toBe(200);
    expect(bob.headers["ratelimit-remaining"]).toBe("1");
  });

  it("behind a trusted proxy (trustProxy: 1) keys on the address the proxy appended", async () => {
    const server = await start(whoApp(), { trustProxy: 1 });
    expect((await send(server, ALICE, "GET", "/who", { "x-forwarded-for": "6.6.6.6, 203.0.113.7" })).body).toEqual({ address: "203.0.113.7" });
    // Both requests come through the same proxy socket, for two different clients.
    expect((await ping(server, ALICE, { "x-forwarded-for": "203.0.113.7" })).status).toBe(200);
    expect((await ping(server, ALICE, { "x-forwarded-for": "203.0.113.7" })).status).toBe(200);
    expect((await ping(server, ALICE, { "x-forwarded-for": "203.0.113.7" })).status).toBe(429);
    expect((await ping(server, ALICE, { "x-forwarded-for": "203.0.113.8" })).status).toBe(200);
  });

  it("behind a proxy list, believes only the listed proxies", async () => {
    const server = await start(whoApp(), { trustProxy: [ALICE] });
    expect((await send(server, ALICE, "GET", "/who", { "x-forwarded-for": "203.0.113.7" })).body).toEqual({ address: "203.0.113.7" });
    expect((await send(server, BOB, "GET", "/who", { "x-forwarded-for": "203.0.113.7" })).body).toEqual({ address: BOB });
  });

  it("decides the address without copying the request", async () => {
    const server = await start(whoApp(), { trustProxy: 1 });
    const Original = globalThis.Request;
    let copies = 0;
    globalThis.Request = class extends Original {
      constructor(...args: ConstructorParameters<typeof Request>) {
        copies++;
        super(...args);
      }
    } as typeof Request;
    try {
      for (let i = 0; i < 3; i++) {
        expect((await send(server, ALICE, "GET", "/who", { "x-forwarded-for": "203.0.113.9", "x-real-ip": "6.6.6.6" })).body).toEqual({ address: "203.0.113.9" });
        expect((await ping(server, BOB, { "x-forwarded-for": `203.0.113.${20 + i}` })).status).toBe(200);
      }
    } finally {
      globalThis.Request = Original;
    }
    expect(copies).toBe(0);
  });

  it("refuses a malformed trustProxy before the app starts", async () => {
    await expect(serve(whoApp(), { port: 0, handleSignals: false, trustProxy: ["not-a-range"] })).rejects.toThrow(/not an IP address or CIDR range/);
  });
});

describe("the auth library behind serve()", () => {
  const SECRET = "a-test-secret-that-is-long-enough-1234567890";
  const authApp = () =>
    new App({ db: sqliteMemory(), baseUrl: ORIGIN })
      .schema(schema("1").auth().build())
      .auth({ secret: SECRET, emailAndPassword: { enabled: true }, rateLimit: { enabled: true } });
  const signIn = (server: RunningServer, from: string, password: string, headers: Record<string, string> = {}) =>
    send(server, from, "POST", "/api/auth/sign-in/email", { origin: ORIGIN, ...headers }, { email: "bob@example.com", password });

  it("limits sign-in per client, and stores each session's real address", async () => {
    const server = await start(authApp());
    const signedUp = await send(server, BOB, "POST", "/api/auth/sign-up/email", { origin: ORIGIN }, {
      email: "bob@example.com",
      password: "correct-horse-battery-staple",
      name: "bob",
    });
    expect(signedUp.status).toBe(200);
    // Alice guesses Bob's password until the library stops her (3 per 10 s), pretending to be Bob
    // through every header she can think of.
    const spoof = { "x-forwarded-for": BOB, "x-real-ip": BOB, "x-trellis-client-address": BOB };
    for (let i = 0; i < 3; i++) expect((await signIn(server, ALICE, "wrong-password-guess", spoof)).status).toBe(401);
    expect((await signIn(server, ALICE, "wrong-password-guess", spoof)).status).toBe(429);
    // Bob is not locked out by her.
    const bob = await signIn(server, BOB, "correct-horse-battery-staple");
    expect(bob.status).toBe(200);
    const sessions = await (server.app.db as any).selectFrom("session").select(["ipAddress"]).execute();
    expect(sessions.map((row: { ipAddress: string }) => row.ipAddress)).toEqual([BOB, BOB]);
  });

  it("keeps a client from naming its address through headers a procedure hands to the library", async () => {
    const app = authApp().procedure("login", (base) =>
      base.input(z.object({ email: z.string(), password: z.string() })).handler(async ({ input, context }) => {
        const auth = context.auth as { api: { signInEmail(options: unknown): Promise<unknown> } };
        await auth.api.signInEmail({ body: input, headers: context.headers });
        return true;
      }),
    );
    const server = await start(app);
    const password = "correct-horse-battery-staple";
    expect((await send(server, BOB, "POST", "/api/auth/sign-up/email", { origin: ORIGIN }, { email: "bob@example.com", password, name: "bob" })).status).toBe(200);
    const login = await send(server, ALICE, "POST", "/rpc/login", { "x-trellis-client-address": "203.0.113.66", "x-forwarded-for": "203.0.113.67" }, {
      json: { email: "bob@example.com", password },
    });
    expect(login.status).toBe(200);
    const sessions = await (server.app.db as any).selectFrom("session").select(["ipAddress"]).execute();
    expect(sessions.map((row: { ipAddress: string }) => row.ipAddress)).toEqual([BOB, ALICE]);
  });
});

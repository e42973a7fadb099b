// The rate limit counted each IPv6 address on its own. A client is handed a whole /64 (any home
// line or rented server has one) and picks the low 64 bits of its source address freely, so it got
// a fresh `maxPerAddress` budget per request: guessed credentials were not throttled at all, and with
// the memory store a flood of addresses pushed every new client into the shared overflow bucket.
// The auth library's own limiter already counts an IPv6 client by its /64.
import { describe, expect, it } from "vitest";
import { App } from "../../presets/trellis.js";
import { closeAfterEach, sqliteMemory } from "../support/app.js";

const build = closeAfterEach();

function limited() {
  return build(new App({ db: sqliteMemory(), rateLimit: { max: 2, windowMs: 60_000 }, onError: () => {} }).procedure("ping", (base) => base.handler(() => "pong")));
}

const call = (app: ReturnType<typeof limited>, clientAddress: string) =>
  app.handle(new Request("http://localhost/rpc/ping", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }), { clientAddress });

describe("the rate limit and IPv6 clients", () => {
  it("counts every address of one /64 against one budget", async () => {
    const app = limited();
    expect((await call(app, "2001:db8:1:2::1")).status).toBe(200);
    expect((await call(app, "2001:db8:1:2:aaaa:bbbb:cccc:dddd")).status).toBe(200);
    const third = await call(app, "2001:0DB8:0001:0002:0:0:0:ffff");
    expect(third.status).toBe(429);
    expect(third.headers.get("RateLimit-Limit")).toBe("2");
  });

  it("keeps other /64s, and IPv4 addresses, apart", async () => {
    const app = limited();
    for (const address of ["2001:db8:1:2::1", "2001:db8:1:3::1", "2001:db8:1:4::1", "192.0.2.1", "192.0.2.2"]) {
      expect((await call(app, address)).status).toBe(200);
      expect((await call(app, address)).status).toBe(200);
    }
    // An IPv4 client seen on a dual-stack socket is that IPv4 client.
    expect((await call(app, "::ffff:192.0.2.1")).status).toBe(429);
  });
});

// Live streams: a caller's share of the slots, revocation that no snapshot outruns, and arguments
// refused exactly as list refuses them, before any stream starts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RpcError } from "../../kernel/index.js";
import { localLive } from "../../kernel/db/dialect/entry.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { errorOf, rpc, sqliteMemory } from "../support/app.js";
import { keySessionsOf } from "../support/key-sessions.js";

const v1 = schema("1")
  .table("note", (t) => ({ id: t.serial().primaryKey(), body: t.text() }))
  .table("msg", (t) => ({ id: t.serial().primaryKey(), body: t.text() }))
  .table("pair", (t) => ({ id: t.serial().primaryKey(), body: t.text() }))
  .table("wide", (t) => ({ id: t.serial().primaryKey(), body: t.text() }))
  .build();

/** Sessions from `x-api-key: <user>`, valid while the user is in `signedIn`; each lookup takes `lookupMs`. */
const signedIn = new Set<string>();
let lookupMs = 0;
// A slow session store when lookupMs > 0: it reads first and answers later.
const sessions = keySessionsOf({ accepts: (id) => signedIn.has(id), lookupMs: () => lookupMs });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Opens `name` over HTTP from `address`; the response stays open until `close()`. */
async function subscribe(built: any, name: string, address: string, body = "{}", headers: Record<string, string> = {}) {
  const response: Response = await built.handle(
    new Request(`http://localhost/rpc/${name.replace(".", "/")}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body }),
    { clientAddress: address },
  );
  const reader = response.body?.getReader();
  return {
    status: response.status,
    text: async () => new TextDecoder().decode((await reader!.read()).value),
    close: async () => {
      await reader?.cancel();
      // The slot is given back when the server side of the stream sees the cancel.
      await sleep(20);
    },
  };
}

describe("live streams", () => {
  let built: any;
  beforeAll(async () => {
    built = new App({ db: { ...sqliteMemory(), live: localLive() }, onError: () => {} })
      .schema(v1)
      .use(sessions)
      .resource("note", { live: { max: 3 } })
      .resource("pair", { live: { max: 2 } })
      .resource("wide", { live: true })
      .resource("msg", { permissions: { list: "authenticated", create: "authenticated" }, live: { revalidateMs: 10, maxPerCaller: 100 } })
      .build();
    await built.migrator.migrateToLatest();
  });
  afterAll(() => built.close());

  it("never refuses a caller while most of the slots are free", async () => {
    // max 2: one caller's second stream is answered (half the slots were free); the resource is then full.
    const mine = [await subscribe(built, "pair.live", "203.0.113.1"), await subscribe(built, "pair.live", "203.0.113.1")];
    expect(mine.map((stream) => stream.status)).toEqual([200, 200]);
    const full = await subscribe(built, "pair.live", "203.0.113.2");
    expect(full.status).toBe(429);
    expect(JSON.parse(await full.text()).json.message).toBe("At most 2 live pair streams may be open");
    for (const stream of mine) await stream.close();
    // max 100, maxPerCaller 10: a caller's eleventh and twelfth streams, with 89 slots free.
    signedIn.add("bo");
    const client = built.client({ "x-api-key": "bo" });
    const streams = [];
    for (let i = 0; i < 12; i++) streams.push(await client.wide.live({}));
    expect(streams).toHaveLength(12);
    for (const stream of streams) await stream.return();
  });

  it("caps one caller's streams (by client address when anonymous) once the resource is nearly full, so the others keep their slots", async () => {
    // max 3: once 2 are open (the last third, one slot, is kept), a caller holding ceil(3 / 2) = 2 is refused.
    const mine = [await subscribe(built, "note.live", "203.0.113.1"), await subscribe(built, "note.live", "203.0.113.1")];
    expect(mine.map((stream) => stream.status)).toEqual([200, 200]);
    const third = await subscribe(built, "note.live", "203.0.113.1");
    expect(third.status).toBe(429);
    expect(JSON.parse(await third.text()).json).toMatchObject({ code: "TOO_MANY_REQUESTS", message: "At most 2 live note streams may be open per caller while the resource is nearly full (2 of 3 open); close one first" });

    const other = await subscribe(built, "note.live", "203.0.113.2");
    expect(other.status).toBe(200);
    // The global cap still holds.
    const full = await subscribe(built, "note.live", "203.0.113.3");
    expect(full.status).toBe(429);
    expect(JSON.parse(await full.text()).json.message).toBe("At most 3 live note streams may be open");

    // A closed stream gives its slot back to everyone (once the server side sees the cancel).
    await mine[0].close();
    let again = await subscribe(built, "note.live", "203.0.113.3");
    for (let tries = 0; again.status === 429 && tries < 50; tries++) {
      await sleep(20);
      again = await subscribe(built, "note.live", "203.0.113.3");
    }
    expect(again.status).toBe(200);
    for (const stream of [mine[1], other, again]) await stream.close();
  });

  it("caps a signed-in caller by user, whatever the address", async () => {
    signedIn.add("ada");
    const client = built.client({ "x-api-key": "ada" });
    const open = [await client.note.live({}), await client.note.live({})];
    const refused = await client.note.live({}).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RpcError);
    expect((refused as RpcError<any, any>).status).toBe(429);
    // Anonymous callers are another caller.
    const anonymous = await subscribe(built, "note.live", "203.0.113.9");
    expect(anonymous.status).toBe(200);
    await anonymous.close();
    for (const stream of open) await stream.return();
  });

  it("never hands out a snapshot once a revalidation is due and the session is gone (30 runs)", async () => {
    // The check takes 30 ms and falls due every 10 ms: a snapshot ready while it runs must wait for it.
    lookupMs = 30;
    try {
      // Thirty streams at once, each revoked, each then offered a snapshot once its check is due.
      const outcomes = await Promise.all(
        Array.from({ length: 30 }, async (_, run) => {
          const user = `revoked-${run}`;
          signedIn.add(user);
          const stream = await built.client({ "x-api-key": user }).msg.live({});
          await stream.next();
          signedIn.delete(user);
          await sleep(12); // the check is due now (and the timer's check is in flight)
          await built.db.insertInto("msg").values({ body: `after ${run}` }).execute();
          return stream.next().then(
            (result: unknown) => ({ run, delivered: result }),
            (error: RpcError<any, any>) => ({ run, status: error.status }),
          );
        }),
      );
      expect(outcomes).toEqual(Array.from({ length: 30 }, (_, run) => ({ run, status: 401 })));
    } finally {
      lookupMs = 0;
    }
  });

  it("validates live arguments with list's schema: the same 400 before any stream starts", async () => {
    for (const input of [`{"where":{"__proto__":{"body":"x"}}}`, `{"where":{"nope":1}}`, `{"take":-1}`, `{"include":{"x":false}}`]) {
      const body = `{"json":${input}}`;
      const list = await built.handle(new Request("http://localhost/rpc/note/list", { method: "POST", headers: { "content-type": "application/json" }, body }));
      const live = await subscribe(built, "note.live", "203.0.113.20", body);
      expect(live.status, input).toBe(400);
      expect(list.status, input).toBe(400);
      const liveBody = JSON.parse(await live.text());
      const listBody = (await list.json()) as any;
      expect(liveBody.json.code, input).toBe("BAD_REQUEST");
      expect(liveBody.json.message, input).toBe(listBody.json.message);
    }
  });

  it("refuses live limits it cannot apply at the .resource() call", () => {
    const error = errorOf(() => new App({ db: sqliteMemory() }).schema(v1).resource("note", { live: { max: 0, maxPerCaller: 1.5, revalidateMs: -1 } }));
    expect(error.code).toBe("RESOURCE_LIVE_INVALID");
    expect(error.message).toBe(
      'Resource "note": live max must be a whole number above 0, got 0; maxPerCaller must be a whole number above 0, got 1.5; revalidateMs must be false or a whole number of milliseconds above 0, got -1',
    );
  });
});

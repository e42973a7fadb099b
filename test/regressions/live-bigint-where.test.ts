import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { openDatabase, type TestDatabase } from "../support/databases.js";
import { ORIGIN, signUp } from "../support/auth.js";
import { SECRET } from "../admin/fixture.js";

/**
 * A bigint column filtered with a bigint value (what the typed client carries for a bigint): the
 * list answers it, so the live stream of the same resource must too, not fail with a 500.
 */
const v1 = schema("1").table("tally", (t) => ({ id: t.serial().primaryKey(), big: t.bigint() })).build();

describe("a live stream filtered on a bigint value", () => {
  let database: TestDatabase;
  let built: any;
  beforeAll(async () => {
    database = await openDatabase("pglite");
    built = new App({ db: { dialect: database.dialect, kind: database.kind, live: { kind: "pglite" } } })
      .schema(v1)
      .resource("tally", { permissions: { list: "public", create: "public" }, live: { revalidateMs: false } })
      .build();
    await built.migrator.migrateToLatest();
    await built.db.insertInto("tally").values([{ big: "5" }, { big: "6" }]).execute();
  });
  afterAll(async () => {
    await built.close();
    await database.close();
  });

  it("answers the list and the live stream alike", async () => {
    const client = built.client();
    const listed = await client.tally.list({ where: { big: 5n } });
    expect(listed.map((row: { big: unknown }) => String(row.big))).toEqual(["5"]);
    const stream = await client.tally.live({ where: { big: 5n } });
    const { value } = await stream.next();
    expect(value.map((row: { big: unknown }) => String(row.big))).toEqual(["5"]);
    await stream.return();
  });

  it("in process too", async () => {
    const controller = new AbortController();
    const stream = built.db.query.tally.live({ where: { big: 5n } }, { signal: controller.signal });
    const { value } = await stream.next();
    expect(value.map((row: { big: unknown }) => String(row.big))).toEqual(["5"]);
    controller.abort();
  });
});

describe("a live stream under a list rule that narrows by a bigint value", () => {
  const v2 = schema("1").auth().table("scoped", (t) => ({ id: t.serial().primaryKey(), big: t.bigint() })).build();
  let database: TestDatabase;
  let built: any;
  beforeAll(async () => {
    database = await openDatabase("pglite");
    built = new App({ baseUrl: ORIGIN, db: { dialect: database.dialect, kind: database.kind, live: { kind: "pglite" } } })
      .schema(v2)
      .auth({ secret: SECRET, emailAndPassword: { enabled: true } })
      // A bigint column takes a bigint value: the rule narrows by one.
      .resource("scoped", { permissions: { list: ({ context }: any) => (context.user ? { big: 6n } : false) }, live: { revalidateMs: false } })
      .build();
    await built.migrator.migrateToLatest();
    await built.db.insertInto("scoped").values([{ big: "5" }, { big: "6" }]).execute();
  });
  afterAll(async () => {
    await built.close();
    await database.close();
  });

  it("answers the stream as it answers the list", async () => {
    const who = await signUp(built, "ada@example.test");
    const client = built.client({ cookie: who.cookie });
    expect((await client.scoped.list({})).map((row: { big: unknown }) => String(row.big))).toEqual(["6"]);
    const stream = await client.scoped.live({});
    const { value } = await stream.next();
    expect(value.map((row: { big: unknown }) => String(row.big))).toEqual(["6"]);
    await stream.return();
  });
});

// The sign-in flags of schema().auth(): twoFactor, passkeys and sso declare exactly what better-auth's
// plugins read and write, and a later version that turns them on migrates an existing database.
import { passkey } from "@better-auth/passkey";
import { sso } from "@better-auth/sso";
import { getAuthTables } from "better-auth/db";
import { admin, twoFactor } from "better-auth/plugins";
import { sql } from "kysely";
import { afterAll, describe, expect, it, test } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import type { ColumnType } from "../../kernel/schema/model.js";
import { App } from "../../presets/trellis.js";
import { sqliteMemory } from "../support/app.js";
import { families, openDatabase, type TestDatabase } from "../support/databases.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";

describe("schema().auth({ twoFactor, passkeys, sso })", () => {
  const all = schema("1").auth({ twoFactor: true, passkeys: true, sso: true }).build();

  test("matches every field better-auth 1.7's two-factor, passkey and SSO plugins expect (SSO's domain verification included)", () => {
    const expected = getAuthTables({ plugins: [admin(), twoFactor(), passkey(), sso({ domainVerification: { enabled: true } })] } as never) as Record<
      string,
      { fields: Record<string, { type: string; required?: boolean; unique?: boolean; references?: { model: string; field: string } }> }
    >;
    const types: Record<string, ColumnType> = { string: "text", boolean: "boolean", date: "timestamp", number: "integer" };
    for (const table of ["twoFactor", "passkey", "ssoProvider"]) {
      const columns = all.tables[table].columns;
      expect(Object.keys(columns), table).toEqual(["id", ...Object.keys(expected[table].fields)]);
      for (const [name, field] of Object.entries(expected[table].fields)) {
        expect(columns[name].type, `${table}.${name}`).toBe(types[field.type]);
        expect(columns[name].unique, `${table}.${name}`).toBe(field.unique === true);
        if (field.references) expect(columns[name].references, `${table}.${name}`).toMatchObject({ table: field.references.model, column: field.references.field });
      }
    }
    expect(all.tables.user.columns.twoFactorEnabled).toMatchObject({ type: "boolean", nullable: true, default: { kind: "value", value: false } });
    expect(all.auth).toEqual({ apiKeys: false, twoFactor: true, passkeys: true, sso: true });
  });

  test("each flag is off by default and adds only its own tables", () => {
    const core = schema("1").auth().build();
    expect(Object.keys(core.tables).sort()).toEqual(["account", "session", "user", "verification"]);
    expect(core.tables.user.columns.twoFactorEnabled).toBeUndefined();
    expect(core.auth).toEqual({ apiKeys: false });
    const keys = Object.keys(schema("1").auth({ passkeys: true }).build().tables);
    expect(keys).toContain("passkey");
    expect(keys).not.toContain("twoFactor");
  });

  test("a later .auth() call or version keeps a method an earlier one turned on", () => {
    const v1 = schema("1").auth({ twoFactor: true }).build();
    expect(schema("2").extend(v1).build().auth).toEqual({ apiKeys: false, twoFactor: true });
    expect(schema("2").extend(v1).auth({ passkeys: true }).build().auth).toEqual({ apiKeys: false, twoFactor: true, passkeys: true });
    expect(schema("1").auth({ sso: true }).auth().build().tables.ssoProvider).toBeDefined();
  });

  test("a two-factor core column cannot change kind", () => {
    const redeclared = () =>
      schema("1")
        .auth({ twoFactor: true })
        .table("user", (t) => ({ twoFactorEnabled: t.text() }))
        .build();
    expect(redeclared).toThrow(/user\.twoFactorEnabled/);
  });
});

describe.each(families())("turning the methods on in a later version (%s)", (family) => {
  let database: TestDatabase;
  let app: Awaited<ReturnType<ReturnType<typeof create>["start"]>> | undefined;
  const v1 = schema("1").auth().build();
  const v2 = schema("2").extend(v1).auth({ twoFactor: true, passkeys: true, sso: true }).build();
  const create = (versions: (typeof v1 | typeof v2)[]) => {
    let built = new App({ baseUrl: "http://localhost:3000", db: { dialect: database.dialect, kind: database.kind } }) as App<any>;
    for (const version of versions) built = built.schema(version);
    return built.auth({ secret: SECRET, emailAndPassword: { enabled: true } });
  };
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  it("adds the tables and user.twoFactorEnabled (false unless set), each cleaned up with its user", async () => {
    database = await openDatabase(family);
    // Two migration steps: version 1 creates the core tables, version 2 alters user and adds the rest.
    app = await create([v1, v2]).start();
    const steps = await sql<{ version: string }>`select version from trellis_migration order by version`.execute(app.db);
    expect(steps.rows.map((row) => row.version)).toEqual(["1", "2"]);
    await app.db.insertInto("user").values({ id: "u1", name: "Ada", email: "ada@example.test" }).execute();
    const user = await app.db.selectFrom("user").selectAll().where("id", "=", "u1").executeTakeFirstOrThrow();
    expect(Boolean(user.twoFactorEnabled)).toBe(false);
    await app.db
      .insertInto("passkey")
      .values({ id: "p1", publicKey: "pk", userId: "u1", credentialID: "c1", counter: 0, deviceType: "singleDevice", backedUp: false })
      .execute();
    await app.db.insertInto("twoFactor").values({ id: "t1", secret: "s", backupCodes: "b", userId: "u1" }).execute();
    await app.db.insertInto("ssoProvider").values({ id: "s1", issuer: "https://idp.test", providerId: "idp", domain: "example.test", userId: "u1" }).execute();
    // Deleting the user takes their factors and passkeys with them, and leaves the provider.
    await app.db.deleteFrom("user").where("id", "=", "u1").execute();
    const left = await sql<{ n: number }>`select (select count(*) from "passkey") + (select count(*) from "twoFactor") as n`.execute(app.db);
    expect(Number(left.rows[0].n)).toBe(0);
    const provider = await app.db.selectFrom("ssoProvider").selectAll().executeTakeFirstOrThrow();
    expect(provider.userId).toBeNull();
  }, 30_000);
});

describe("a two-factor plugin without the flag", () => {
  it("fails the build naming what is missing and the flag that declares it", async () => {
    const { twoFactor: plugin } = await import("better-auth/plugins/two-factor");
    const app = new App({ baseUrl: "http://localhost:3000", db: sqliteMemory() })
      .schema(schema("1").auth().build())
      .auth({ secret: SECRET, plugins: [plugin()] });
    expect(() => app.build()).toThrow(/user\.twoFactorEnabled.*table "twoFactor".*schema\(\.\.\.\)\.auth\(\{ twoFactor: true \}\)/s);
  });
});

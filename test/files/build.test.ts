import { describe, expect, it } from "vitest";
import { sql } from "kysely";
import { schema } from "../../kernel/schema/index.js";
import { memoryStorage } from "../../kernel/storage/index.js";
import { App } from "../../presets/trellis.js";
import { errorOf, sqliteMemory } from "../support/app.js";
import { openDatabase } from "../support/databases.js";
import { signUp } from "../support/auth.js";
import { bytes, filesApp, trackedStorage, upload, uploadForm } from "./fixture.js";

const unowned = schema("1")
  .table("post", (t) => ({ id: t.serial().primaryKey(), title: t.text() }))
  .files({ owner: false, attachTo: ["post"] })
  .build();
const noFiles = schema("1").table("post", (t) => ({ id: t.serial().primaryKey() })).build();
const publicRules = { upload: "public", list: "public", get: "public", delete: "public" } as const;

describe("files build-time rules", () => {
  it("throws FILES_NO_STORAGE without a storage on the constructor or in the config", () => {
    expect(errorOf(() => new App({ db: sqliteMemory() }).schema(unowned).files({ permissions: publicRules }).build())).toMatchObject({
      code: "FILES_NO_STORAGE",
      plugin: "files",
      message: expect.stringMatching(/needs a storage/),
    });
    expect(() => new App({ db: sqliteMemory() }).schema(unowned).files({ storage: memoryStorage(), permissions: publicRules }).build().close()).not.toThrow();
  });

  it("throws FILES_NO_TABLE when the latest schema has no .files()", () => {
    expect(errorOf(() => new App({ db: sqliteMemory(), storage: memoryStorage() }).schema(noFiles).files({ permissions: publicRules }).build())).toMatchObject({
      code: "FILES_NO_TABLE",
      message: expect.stringMatching(/add \.files\(\) to the latest schema \(version "1"\)/),
    });
  });

  it("throws FILES_BAD_PATH for a path without an :id segment", () => {
    for (const path of ["/files", "/files/:idx", "files/:id"]) {
      expect(errorOf(() => new App({ db: sqliteMemory(), storage: memoryStorage() }).schema(unowned).files({ path, permissions: publicRules }).build())).toMatchObject({ code: "FILES_BAD_PATH" });
    }
  });

  it("needs .auth() for the default (non-public) permissions, naming each", () => {
    const error = errorOf(() => new App({ db: sqliteMemory(), storage: memoryStorage() }).schema(unowned).files({ permissions: { get: "public", delete: "public" } }).build());
    expect(error).toMatchObject({ code: "KERNEL_AUTH_REQUIRED", message: expect.stringMatching(/files upload \(permission "authenticated"\); files list \(permission "authenticated"\)/) });
  });

  it("refuses owner permissions when the schema has .files({ owner: false })", () => {
    const error = errorOf(() => new App({ db: sqliteMemory(), storage: memoryStorage() }).schema(unowned).files({ permissions: { ...publicRules, get: "owner" } }).build());
    expect(error.cause?.map?.((problem: { code: string }) => problem.code) ?? [error.code]).toContain("FILES_OWNER_WITHOUT_COLUMN");
  });

  it("reports every problem at once and reserves the file namespace", () => {
    const error = errorOf(() => new App({ db: sqliteMemory() }).schema(noFiles).files({ path: "/x", permissions: publicRules }).build());
    expect(error.cause.map((problem: { code: string }) => problem.code)).toEqual(["FILES_NO_STORAGE", "FILES_NO_TABLE", "FILES_BAD_PATH"]);
    const clash = errorOf(() =>
      new App({ db: sqliteMemory(), storage: memoryStorage() })
        .schema(unowned)
        .files({ permissions: publicRules })
        .procedure("file.mine", (base) => base.handler(() => 1))
        .build(),
    );
    expect(clash).toMatchObject({ code: "KERNEL_RESERVED_NAME" });
  });
});

describe("files without owners, and what a failure leaves behind", () => {
  it("serves unowned files by the configured rules and writes no userId", async () => {
    const database = await openDatabase("sqlite");
    const app = await new App({ db: database, storage: memoryStorage() }).schema(unowned).files({ permissions: publicRules }).start();
    try {
      const post = await app.db.insertInto("post").values({ title: "a" }).returning("id").executeTakeFirstOrThrow();
      const sent = await upload(app, uploadForm(new Blob([bytes(3)]), "a.bin", { attach: { table: "post", entityId: post.id } }));
      expect(sent.status).toBe(200);
      expect(Object.keys(sent.body)).not.toContain("userId");
      expect((await app.client().file.list({ attachedTo: { table: "post", entityId: post.id } })).map((file) => file.id)).toEqual([sent.body.id]);
    } finally {
      await app.close();
      await database.close();
    }
  });

  it("removes the bytes again when the row cannot be written, and writes no row when the bytes cannot be", async () => {
    const database = await openDatabase("sqlite");
    const storage = trackedStorage();
    const errors: unknown[] = [];
    const app = await filesApp(database, { storage, onError: (error) => errors.push(error) }).start();
    try {
      const ada = await signUp(app, "ada@example.test");
      const post = await app.client({ cookie: ada.cookie }).post.create({ title: "p" });
      // The pivot insert fails after the file row was written: the transaction rolls back and the blob goes.
      await sql`drop table post_file`.execute(app.db);
      const failed = await upload(app, uploadForm(new Blob([bytes(5)]), "x.png", { attach: { table: "post", entityId: post.id } }), { cookie: ada.cookie });
      expect(failed).toMatchObject({ status: 500, body: { message: "Internal server error" } });
      expect(errors).toHaveLength(1);
      expect(storage.keys()).toEqual([]);
      expect(await app.db.selectFrom("file").selectAll().execute()).toEqual([]);
      storage.failNextSet = true;
      // A store that fails is an outage, not a bug: 503 naming the storage, the cause reported.
      expect(await upload(app, uploadForm(new Blob([bytes(5)]), "y.png"), { cookie: ada.cookie })).toMatchObject({
        status: 503,
        body: { message: "Service unavailable: the file storage is not reachable; try again shortly" },
      });
      expect(errors).toHaveLength(2);
      expect(await app.db.selectFrom("file").selectAll().execute()).toEqual([]);
    } finally {
      await app.close();
      await database.close();
    }
  });
});


// `.files({ maxBytes })` took any safe integer, but `file.size` is a 32-bit integer column: with a
// limit past 2 GiB - 1 (a video upload's 4 GiB), an upload that size was streamed whole into
// storage and then failed at its row's insert on PostgreSQL (integer out of range), its bytes
// deleted again. Such a limit is now refused when the app is built (FILES_BAD_OPTION).
import { describe, expect, it } from "vitest";
import { memoryStorage } from "../../kernel/storage/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { errorOf, sqliteMemory } from "../support/app.js";
import { openDatabase } from "../support/databases.js";

const v1 = schema("1").files({ owner: false }).build();
const permissions = { upload: "public", list: "public", get: "public", delete: "public" } as const;
const build = (maxBytes: number) => new App({ db: sqliteMemory(), storage: memoryStorage() }).schema(v1).files({ permissions, maxBytes }).build();

describe("files maxBytes and the size column", () => {
  it("refuses a limit the size column cannot hold", () => {
    expect(errorOf(() => build(2 ** 31))).toMatchObject({ code: "FILES_BAD_OPTION", plugin: "files", message: expect.stringContaining("at most 2147483647") });
    expect(errorOf(() => build(4 * 1024 ** 3))).toMatchObject({ code: "FILES_BAD_OPTION" });
  });

  it("takes the largest size the column holds", async () => {
    await build(2 ** 31 - 1).close();
  });

  it("a row of that size is the largest PostgreSQL stores", async () => {
    const database = await openDatabase("pglite");
    const app = await new App({ db: { dialect: database.dialect, kind: database.kind }, storage: memoryStorage() }).schema(v1).files({ permissions }).start();
    try {
      const row = (size: number) => ({ id: `f${size}`, key: `files/${size}`, name: "a", type: "application/octet-stream", size });
      await app.db.insertInto("file").values(row(2 ** 31 - 1)).execute();
      await expect(app.db.insertInto("file").values(row(2 ** 31)).execute()).rejects.toThrow();
    } finally {
      await app.close();
      await database.close();
    }
  });
});

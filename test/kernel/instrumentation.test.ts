import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { definePlugin, type Observer } from "../../kernel/index.js";
import { memoryStorage } from "../../kernel/storage/index.js";
import { App } from "../../presets/trellis.js";
import { closeAfterEach, rpc, sqliteMemory } from "../support/app.js";

const build = closeAfterEach();

/** An in-house observer: what the kernel lets a plugin see, in the order it happens. */
function recorder(seen: string[], tag = "") {
  return definePlugin({
    name: `recorder${tag}`,
    build(ctx) {
      const observer: Observer = {
        procedure: (name, source, run) => (seen.push(`${tag}procedure ${name} ${source}`), run()),
        statement: (text, run) => (seen.push(`${tag}statement ${text}`), run()),
        connectionWait: (ms) => void (ms >= 0 && !seen.includes(`${tag}wait`) && seen.push(`${tag}wait`)),
        storage: (operation, run, bytes) => (seen.push(`${tag}storage ${operation}${bytes === undefined ? "" : ` ${bytes}`}`), run()),
      };
      ctx.need("instrumentation").add(observer);
    },
  });
}

const app = (...plugins: ReturnType<typeof recorder>[]) => {
  const built = new App({ db: sqliteMemory(), storage: memoryStorage(), telemetry: false }).procedure("note.save", (base) =>
    base.input(z.object({ text: z.string() })).handler(async ({ input, context }) => {
      await sql`select ${input.text} as text`.execute(context.db);
      await context.storage!.set("note", new TextEncoder().encode(input.text));
      return { saved: (await context.storage!.get("note"))?.byteLength };
    }),
  );
  for (const plugin of plugins) built.use(plugin);
  return build(built);
};

describe("the kernel's instrumentation", () => {
  it("shows an observer every procedure call, SQL statement (text only), connection wait and storage call", async () => {
    const seen: string[] = [];
    const built = app(recorder(seen));
    await built.migrator.migrateToLatest();
    // Setup's own statements (SQLite's foreign-key pragma) are observed too.
    expect(seen).toContain("statement PRAGMA foreign_keys = ON");
    seen.length = 0;
    expect(await rpc(built, "note.save", { text: "hello" })).toMatchObject({ status: 200, body: { saved: 5 } });
    expect(seen).toEqual(["procedure note.save rpc", "wait", "statement select ? as text", "storage set 5", "storage get"]);
    seen.length = 0;
    await built.client().note.save({ text: "again" });
    expect(seen[0]).toBe("procedure note.save rpc");
  });

  it("nests several observers, the first added outermost", async () => {
    const seen: string[] = [];
    const built = app(recorder(seen, "a:"), recorder(seen, "b:"));
    await built.migrator.migrateToLatest();
    seen.length = 0;
    await rpc(built, "note.save", { text: "x" });
    expect(seen.slice(0, 2)).toEqual(["a:procedure note.save rpc", "b:procedure note.save rpc"]);
    expect(seen.filter((line) => line.includes("statement"))).toEqual(["a:statement select ? as text", "b:statement select ? as text"]);
  });

  it("costs nothing visible without an observer: the storage is the app's own behind a thin wrapper", async () => {
    const built = app();
    expect(await rpc(built, "note.save", { text: "plain" })).toMatchObject({ status: 200, body: { saved: 5 } });
  });
});

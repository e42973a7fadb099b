import { describe, expect, it } from "vitest";
import type { AppPlugin } from "../../kernel/index.js";
import { App } from "../../presets/trellis.js";
import { sqliteMemory } from "../support/app.js";

/**
 * `close()` runs every plugin's close hook. They ran as one tapable series, which stops at the first
 * failure: one plugin whose release threw (a mail transport, a job queue on a lost database) left
 * every later plugin holding what it had (the live plugin's listening connection, the MCP server,
 * timers), and the process alive.
 */
const releases: string[] = [];
const plugin = (name: string, fail: boolean | "at once"): AppPlugin => ({
  name,
  build(ctx) {
    // "at once": a hook that is not async and throws before it returns a promise.
    ctx.hooks.close.tap(
      fail === "at once"
        ? () => {
            releases.push(name);
            throw new Error(`${name} could not release`);
          }
        : async () => {
            releases.push(name);
            if (fail) throw new Error(`${name} could not release`);
          },
    );
  },
});

describe("close() with a close hook that fails", () => {
  it("still runs every other close hook, then rejects with the failure", async () => {
    const built: any = await new App({ db: sqliteMemory() }).use(plugin("first", false)).use(plugin("failing", true)).use(plugin("last", false)).start();
    await expect(built.close()).rejects.toThrow("failing could not release");
    expect(releases).toEqual(["first", "failing", "last"]);
    // Closed all the same: idempotent, and the database is released.
    await expect(built.close()).rejects.toThrow("failing could not release");
    await expect(built.db.selectFrom("kysely_migration").selectAll().execute()).rejects.toThrow();
  });

  it("runs the later hooks when one throws before returning its promise", async () => {
    releases.length = 0;
    const built: any = await new App({ db: sqliteMemory() }).use(plugin("first", false)).use(plugin("throwing", "at once")).use(plugin("last", false)).start();
    await expect(built.close()).rejects.toThrow("throwing could not release");
    expect(releases).toEqual(["first", "throwing", "last"]);
  });
});

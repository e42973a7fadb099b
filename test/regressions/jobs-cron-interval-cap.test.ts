import { describe, expect, it } from "vitest";
import { App } from "../../presets/trellis.js";
import { sqliteMemory } from "../support/app.js";

/**
 * A schedule check runs only when the last one (any replica's) is more than `cronInterval` ago, and
 * each replica's timer fires every `cronInterval`: a check whose statement starts a few milliseconds
 * sooner after the previous one than that one did is skipped (about one in three on an idle
 * embedded database), so checks can be two intervals apart. A check sends a tick less than 60 s
 * old; with `cronInterval` 45, two checks 90 s apart skip every tick of the 30 s in between (a
 * minute's tick one time in two, a daily job now and then). From 1 to 30, two intervals stay
 * within the minute.
 */
describe(".jobs({ cronInterval })", () => {
  it("is refused above 30 seconds, where a skipped check loses ticks", () => {
    for (const cronInterval of [31, 45]) {
      expect(() => new App({ db: sqliteMemory() }).jobs({ cronInterval })).toThrow(expect.objectContaining({ code: "JOBS_BAD_OPTION", message: `.jobs({ cronInterval }) must be a whole number of seconds from 1 to 30 (got ${cronInterval})` }));
    }
    expect(() => new App({ db: sqliteMemory() }).jobs({ cronInterval: 30 })).not.toThrow();
  });
});

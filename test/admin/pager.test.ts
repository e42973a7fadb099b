import { describe, expect, it } from "vitest";
import { rowsStatus } from "../../plugins/admin/ui/pager.js";

describe("the table page's status line", () => {
  it("numbers the rows from the pages turned while nothing changed", () => {
    expect(rowsStatus(0, 25, 60, true)).toBe("Rows 1–25 of 60");
    expect(rowsStatus(25, 25, 60, true)).toBe("Rows 26–50 of 60");
    expect(rowsStatus(50, 10, 60, false)).toBe("Rows 51–60 of 60");
    expect(rowsStatus(0, 7, 7, false)).toBe("Rows 1–7 of 7");
  });

  it("ends the last page at the total, whatever was deleted or inserted before it", () => {
    // One row gone before the third page: its ten rows are the last ten of 59, not rows 51–60.
    expect(rowsStatus(50, 10, 59, false)).toBe("Rows 50–59 of 59");
    expect(rowsStatus(50, 10, 54, false)).toBe("Rows 45–54 of 54");
    // Five inserted before it: the same ten rows are the last of 65.
    expect(rowsStatus(50, 10, 65, false)).toBe("Rows 56–65 of 65");
  });

  it("ends a page with more after it before the total, and never counts fewer rows than are shown", () => {
    // Twenty deleted before the second page: its 25 rows cannot end past row 39 of 40.
    expect(rowsStatus(25, 25, 40, true)).toBe("Rows 15–39 of 40");
    // A count older than the rows (made elsewhere, remembered a few seconds): the rows shown win.
    expect(rowsStatus(25, 25, 20, true)).toBe("Rows 1–25 of 26");
    expect(rowsStatus(50, 10, 4, false)).toBe("Rows 1–10 of 10");
  });

  it("says a page is empty, and how many rows are left, rather than giving a range", () => {
    expect(rowsStatus(0, 0, 0, false)).toBe("No rows");
    expect(rowsStatus(50, 0, 44, false)).toBe("This page is empty now (44 rows in all)");
    expect(rowsStatus(25, 0, 1, false)).toBe("This page is empty now (1 row in all)");
    expect(rowsStatus(25, 0, 0, false)).toBe("This page is empty now (no rows left)");
  });
});

/**
 * The table page's status line for a page of `shown` rows: `start` rows before it as the pages
 * turned count them, `count` the whole selection's as the page loaded, `more` when a next page exists.
 *
 * Rows inserted or deleted before the page while the user pages by cursor make `start` an estimate:
 * the range is clamped to what the rows shown and the count allow, so it never ends past the total.
 * The last page ends at the total (exact whatever changed before it), a page with more after it
 * ends before it, and the total is never less than the rows shown. A page whose rows are all gone
 * says so instead of giving a range.
 */
export function rowsStatus(start: number, shown: number, count: number, more: boolean): string {
  if (shown === 0) {
    if (start === 0) return "No rows";
    return `This page is empty now (${count === 0 ? "no rows left" : `${count} ${count === 1 ? "row" : "rows"} in all`})`;
  }
  const after = more ? 1 : 0;
  const total = Math.max(count, shown + after);
  const last = more ? Math.min(start + shown, total - after) : total;
  return `Rows ${last - shown + 1}–${last} of ${total}`;
}

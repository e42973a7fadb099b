/**
 * A five-field cron expression (minute hour day month weekday, UTC) matched minute by minute, for
 * an app without `.jobs()`. Each field: `*`, a number, a range `a-b`, a step `* /n` or `a-b/n`, or
 * a comma list of those. With `.jobs()` the schedule is the jobs engine's instead.
 */
type Fields = [Set<number>, Set<number>, Set<number>, Set<number>, Set<number>] & {
  /** Both day of month and weekday are restricted (neither starts with `*`): a day matching either runs. */
  eitherDay: boolean;
};

const BOUNDS: Array<[number, number]> = [[0, 59], [0, 23], [1, 31], [1, 12], [0, 7]];

export function parseCron(expression: string): Fields | undefined {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5) return undefined;
  const fields = parts.map((part, i) => field(part, ...BOUNDS[i]!));
  if (fields.some((f) => f === undefined)) return undefined;
  if (fields[4]!.has(7)) fields[4]!.add(0); // Sunday is 0 or 7
  return Object.assign(fields as Set<number>[], { eitherDay: !parts[2]!.startsWith("*") && !parts[4]!.startsWith("*") }) as Fields;
}

function field(text: string, min: number, max: number): Set<number> | undefined {
  const values = new Set<number>();
  for (const item of text.split(",")) {
    const match = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(item);
    if (!match) return undefined;
    const from = match[1] === "*" ? min : Number(match[2]);
    const to = match[1] === "*" ? max : match[3] !== undefined ? Number(match[3]) : match[4] !== undefined ? max : from;
    const step = match[4] !== undefined ? Number(match[4]) : 1;
    if (from < min || to > max || from > to || step < 1) return undefined;
    for (let value = from; value <= to; value += step) values.add(value);
  }
  return values;
}

/**
 * Standard cron (as the jobs engine's): when both day of month and weekday are restricted, a day
 * matching either runs (`0 3 1 * 1` is the 1st and every Monday); else both must match.
 */
export function matches(fields: Fields, at: Date): boolean {
  const [minute, hour, day, month, weekday] = fields;
  const onDay = day.has(at.getUTCDate());
  const onWeekday = weekday.has(at.getUTCDay());
  const days = fields.eitherDay ? onDay || onWeekday : onDay && onWeekday;
  return minute.has(at.getUTCMinutes()) && hour.has(at.getUTCHours()) && month.has(at.getUTCMonth() + 1) && days;
}

/** Calls `run` at the start of every minute the expression matches, until the returned stop is called. */
export function everyMinute(fields: Fields, run: () => void): () => void {
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    const now = Date.now();
    timer = setTimeout(() => {
      if (matches(fields, new Date())) run();
      arm();
    }, 60_000 - (now % 60_000) + 5);
    // A schedule does not keep the process alive: the server does.
    timer.unref();
  };
  arm();
  return () => clearTimeout(timer);
}

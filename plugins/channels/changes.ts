import { TrellisError, toPlainJson, type ChangeEvent, type SchemaModel } from "../../kernel/index.js";
import type { Hub } from "./hub.js";
import type { ChannelChange } from "./options.js";
import type { ChannelPattern } from "./patterns.js";

/** Checks each channel's `changes` against the latest schema: the table, its columns, and a column per parameter. */
export function checkChanges(patterns: readonly ChannelPattern[], schema: SchemaModel): void {
  const problems: string[] = [];
  for (const { pattern, definition, names } of patterns) {
    const changes = definition.changes;
    if (!changes) continue;
    if (Object.hasOwn(definition.events, "change")) problems.push(`"${pattern}" has changes, so its event "change" is taken`);
    const table = schema.tables[changes.table];
    if (!table) {
      problems.push(`"${pattern}" takes changes of "${changes.table}", which is not a table of the latest schema`);
      continue;
    }
    for (const column of [...changes.columns, ...names]) {
      if (!Object.hasOwn(table.columns, column)) problems.push(`"${pattern}" names the column "${column}", which "${changes.table}" lacks`);
    }
    for (const name of names) {
      if (!changes.columns.includes(name)) problems.push(`"${pattern}": the parameter "${name}" must be among the columns sent`);
    }
  }
  if (problems.length) throw new TrellisError("CHANNELS_INVALID", `.channels(): ${problems.join("; ")}`, { plugin: "channels", hook: "validate" });
}

/**
 * Publishes committed writes on the channels that take them: one `change` event per written row,
 * on the channel its parameter columns name (a row without them, or a statement that returned no
 * rows, publishes nothing), its values as plain JSON (dates as ISO strings, bigints as strings).
 */
export function publishChanges(patterns: readonly ChannelPattern[], hub: Hub): ((change: ChangeEvent) => void) | undefined {
  const byTable = new Map<string, ChannelPattern[]>();
  for (const pattern of patterns) {
    const table = pattern.definition.changes?.table;
    if (table) byTable.set(table, [...(byTable.get(table) ?? []), pattern]);
  }
  if (byTable.size === 0) return undefined;
  return (change) => {
    const listening = byTable.get(change.table);
    if (!listening || !change.rows) return;
    for (const written of change.rows) {
      for (const { pattern, names, definition } of listening) {
        const values = names.map((name) => written[name]);
        if (values.some((value) => value === null || value === undefined)) continue;
        let index = 0;
        const channel = pattern.replace(/\{[A-Za-z_][A-Za-z0-9_]*\}/g, () => String(values[index++]));
        const row = JSON.parse(toPlainJson(Object.fromEntries(definition.changes!.columns.map((column) => [column, written[column] ?? null]))));
        hub.publish(channel, "change", { op: change.op, row } satisfies ChannelChange);
      }
    }
  };
}

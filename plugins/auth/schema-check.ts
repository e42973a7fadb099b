import { getAuthTables } from "better-auth/db";
import type { BetterAuthOptions } from "better-auth";
import type { SchemaModel } from "../../kernel/index.js";

/**
 * Tables and columns the auth library, with the plugins it is given, will read or write but the
 * schema does not declare, as `table` or `table.column`. `schema().auth()` covers the core and the
 * admin and API-key plugins; other better-auth plugins (organization, two-factor, ...) add their own.
 */
export function missingAuthColumns(options: BetterAuthOptions, schema: SchemaModel): string[] {
  const missing: string[] = [];
  for (const [key, table] of Object.entries(getAuthTables(options))) {
    const name = table.modelName ?? key;
    const model = schema.tables[name];
    if (!model) {
      missing.push(`table "${name}"`);
      continue;
    }
    for (const [field, definition] of Object.entries(table.fields)) {
      const column = definition.fieldName ?? field;
      if (!Object.hasOwn(model.columns, column)) missing.push(`${name}.${column}`);
    }
  }
  return missing;
}

/** The part of JSON Schema the runner reads (zod's `toJSONSchema` output, input side). */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  default?: unknown;
  description?: string;
}

type Scalar = "string" | "number" | "integer" | "boolean";

/** One field of the runner's form. */
export interface FormField {
  name: string;
  kind: Scalar | "enum" | "array";
  /** `enum`: the choices; `array`: the kind of each item (and its choices, when an enum). */
  values?: string[];
  item?: Scalar;
  required: boolean;
  nullable: boolean;
  default?: unknown;
  description?: string;
}

const SCALARS: readonly string[] = ["string", "number", "integer", "boolean"];

/** `X | null` as JSON Schema writes it (`type: [X, "null"]` or `anyOf: [X, { type: "null" }]`): X, and whether null is allowed. */
function unwrapNull(schema: JsonSchema): { schema: JsonSchema; nullable: boolean } {
  if (Array.isArray(schema.type) && schema.type.length === 2 && schema.type.includes("null")) {
    return { schema: { ...schema, type: schema.type.find((t) => t !== "null") }, nullable: true };
  }
  if (schema.anyOf?.length === 2) {
    const other = schema.anyOf.filter((s) => s.type !== "null");
    if (other.length === 1) return { schema: { ...other[0], default: schema.default ?? other[0]!.default }, nullable: true };
  }
  return { schema, nullable: false };
}

function scalarOrEnum(schema: JsonSchema): { kind: Scalar | "enum"; values?: string[] } | undefined {
  if (schema.enum?.length && schema.enum.every((v) => typeof v === "string")) return { kind: "enum", values: schema.enum as string[] };
  if (typeof schema.type === "string" && SCALARS.includes(schema.type) && !schema.enum) return { kind: schema.type as Scalar };
  return undefined;
}

/**
 * The form for an object input whose every field is a string, number, boolean, enum or an array of
 * those; undefined for any other input (the runner offers raw JSON for it).
 */
export function formFields(schema: JsonSchema): FormField[] | undefined {
  if (schema.type !== "object" || !schema.properties) return undefined;
  const fields: FormField[] = [];
  for (const [name, property] of Object.entries(schema.properties)) {
    const { schema: inner, nullable } = unwrapNull(property);
    const common = { name, required: schema.required?.includes(name) ?? false, nullable, default: inner.default, description: inner.description };
    const found = scalarOrEnum(inner);
    if (found) {
      fields.push({ ...common, ...found });
      continue;
    }
    const item = inner.type === "array" && inner.items ? scalarOrEnum(inner.items) : undefined;
    if (!item) return undefined;
    fields.push({ ...common, kind: "array", item: item.kind === "enum" ? "string" : item.kind, values: item.values });
  }
  return fields;
}

/** What each field starts with: its default, else empty. */
export function initialText(fields: readonly FormField[]): Record<string, string | boolean> {
  const out: Record<string, string | boolean> = {};
  for (const f of fields) {
    if (f.kind === "boolean" && f.required) out[f.name] = f.default === true;
    else if (f.default === undefined || f.default === null) out[f.name] = "";
    else out[f.name] = f.kind === "array" && Array.isArray(f.default) ? f.default.join("\n") : String(f.default);
  }
  return out;
}

function scalar(kind: Scalar, text: string): unknown {
  if (kind === "string") return text;
  if (kind === "boolean") return text === "true";
  // Not a number: sent as typed, so the procedure's own validation names the field.
  const number = Number(text);
  return Number.isNaN(number) ? text : number;
}

/**
 * The input the form describes. An empty field is left out when optional, `null` when it may be
 * null, and sent empty otherwise (the procedure's validation then says what it wants). Arrays are
 * one item per line.
 */
export function formValue(fields: readonly FormField[], text: Record<string, string | boolean>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    const value = text[f.name];
    if (typeof value === "boolean") {
      out[f.name] = value;
      continue;
    }
    if (value === undefined || value.trim() === "") {
      if (!f.required) continue;
      out[f.name] = f.nullable ? null : f.kind === "array" ? [] : value ?? "";
      continue;
    }
    if (f.kind === "array") out[f.name] = value.split("\n").filter((line) => line.trim() !== "").map((line) => scalar(f.item!, line.trim()));
    else out[f.name] = f.kind === "enum" || f.kind === "string" ? value : scalar(f.kind, value.trim());
  }
  return out;
}

import { describe, expect, it } from "vitest";
import { z } from "zod";
import { formFields, formValue, initialText } from "../../plugins/admin/ui/schema-form.js";

/** The JSON Schema `_admin.procedures` sends for a zod input. */
const json = (schema: z.ZodType) => z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as never;

describe("the runner's form from an input's JSON Schema", () => {
  const input = z.object({
    name: z.string(),
    count: z.number().int().default(3),
    kind: z.enum(["a", "b"]),
    maybe: z.string().nullable(),
    either: z.union([z.number(), z.null()]).optional(),
    flag: z.boolean(),
    soft: z.boolean().optional(),
    ids: z.array(z.number()).optional(),
  });

  it("reads fields of strings, numbers, enums, booleans, nullables and lists", () => {
    expect(formFields(json(input))!.map(({ name, kind, required, nullable, item }) => ({ name, kind, required, nullable, item }))).toEqual([
      { name: "name", kind: "string", required: true, nullable: false, item: undefined },
      { name: "count", kind: "integer", required: false, nullable: false, item: undefined },
      { name: "kind", kind: "enum", required: true, nullable: false, item: undefined },
      { name: "maybe", kind: "string", required: true, nullable: true, item: undefined },
      { name: "either", kind: "number", required: false, nullable: true, item: undefined },
      { name: "flag", kind: "boolean", required: true, nullable: false, item: undefined },
      { name: "soft", kind: "boolean", required: false, nullable: false, item: undefined },
      { name: "ids", kind: "array", required: false, nullable: false, item: "number" },
    ]);
  });

  it("turns the fields' text into the input: defaults shown, empty optional fields left out", () => {
    const fields = formFields(json(input))!;
    const text = initialText(fields);
    expect(text).toEqual({ name: "", count: "3", kind: "", maybe: "", either: "", flag: false, soft: "", ids: "" });
    expect(formValue(fields, text)).toEqual({ name: "", count: 3, kind: "", maybe: null, flag: false });
    const filled = { ...text, name: " Ann ", kind: "b", maybe: "x", either: "2.5", soft: "false", ids: "1\n\n 2 \n" };
    expect(formValue(fields, filled)).toEqual({ name: " Ann ", count: 3, kind: "b", maybe: "x", either: 2.5, flag: false, soft: false, ids: [1, 2] });
    // Not a number: sent as typed, for the procedure's own validation to name.
    expect(formValue(fields, { ...filled, count: "lots" }).count).toBe("lots");
  });

  it("leaves anything else to raw JSON", () => {
    expect(formFields(json(z.object({ where: z.object({ id: z.number() }) })))).toBeUndefined();
    expect(formFields(json(z.object({ at: z.date() })))).toBeUndefined();
    expect(formFields(json(z.array(z.string())))).toBeUndefined();
    expect(formFields(json(z.object({ rows: z.array(z.object({ a: z.string() })) })))).toBeUndefined();
    expect(formFields(json(z.object({})))).toEqual([]);
  });
});

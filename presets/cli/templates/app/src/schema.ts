import { schema, timestamps } from "trellis/schema";

/**
 * Version 1: accounts (the auth tables) and notes owned by their author. To change the schema,
 * add a version (`schema("2").extend(v1)...`) and register it after this one in app.ts; never edit
 * a version that was applied (`trellis migrate check` finds it).
 */
export const v1 = schema("1")
  .auth() // auth:-flags
  .auth({ // auth:flags
    twoFactor: true, // auth:2fa
    passkeys: true, // auth:passkeys
  }) // auth:flags
  .table("note", (t) => ({
    id: t.serial().primaryKey(),
    title: t.text(),
    body: t.text().default(""),
    ownerId: t.text().references("user", "id", { onDelete: "cascade" }).index(),
    ...timestamps(t),
  }))
  .files({ attachTo: ["note"] }) // surface:files
  .build();

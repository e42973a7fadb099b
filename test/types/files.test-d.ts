import { S3Client, GetObjectCommand, PutObjectCommand, DeleteObjectCommand } from "@aws-sdk/client-s3";
import { createStorage } from "unstorage";
import { describe, expectTypeOf, it } from "vitest";
import { App, type AppStorage, type InferRouter } from "../../presets/trellis.js";
import { createClient } from "../../presets/client.js";
import { schema } from "../../kernel/schema/index.js";
import { fromObjectStore, fromStore, memoryStorage } from "../../kernel/storage/index.js";
import type { FileRecord } from "../../plugins/files/index.js";
import { sqliteMemory } from "../support/app.js";

const v1 = schema("1").auth().table("post", (t) => ({ id: t.serial().primaryKey() })).files({ attachTo: ["post"] }).build();
const app = new App({ db: sqliteMemory(), storage: memoryStorage() })
  .schema(v1)
  .auth({ secret: "x".repeat(32) })
  .files({ accept: ["image/*"], permissions: { get: ({ context, row }) => context.user !== null && row?.size !== 0 } });

describe("files types", () => {
  it("types file.* on the client: a File in, the record out", () => {
    const client = createClient<InferRouter<typeof app>>({ url: "http://x" });
    expectTypeOf(client.file.upload).parameter(0).toMatchTypeOf<{ file: File; attach?: { table: string; entityId: string | number } }>();
    expectTypeOf(client.file.upload).returns.resolves.toEqualTypeOf<FileRecord>();
    expectTypeOf(client.file.list).returns.resolves.toEqualTypeOf<FileRecord[]>();
    expectTypeOf(client.file.get).parameter(0).toEqualTypeOf<{ id: string }>();
    expectTypeOf(client.file.sign).parameter(0).toMatchTypeOf<{ id: string; expiresIn?: number; variant?: string | { width?: number; height?: number }; download?: boolean }>();
    expectTypeOf(client.file.sign).returns.resolves.toEqualTypeOf<{ url: string; expiresAt: Date }>();
  });

  it("types context.files.sign in procedures, and file.placeholder with .files({ placeholder: true })", () => {
    app.procedure("avatar", (base) =>
      base.handler(({ context }) => {
        expectTypeOf(context.files.sign).returns.toEqualTypeOf<string>();
        return context.files.sign("id", { expiresIn: 60, variant: "thumb" });
      }),
    );
    const v2 = schema("2").extend(v1).files({ placeholder: true }).build();
    expectTypeOf<NonNullable<(typeof v2)["~types"]>["tables"]["file"]["placeholder"]["nullable"]>().toEqualTypeOf<true>();
  });

  it("takes the S3 client and an unstorage Storage as they are", () => {
    const s3 = fromObjectStore(new S3Client({}), { GetObjectCommand, PutObjectCommand, DeleteObjectCommand }, "bucket");
    expectTypeOf(s3).toEqualTypeOf<AppStorage>();
    expectTypeOf(fromStore(createStorage())).toEqualTypeOf<AppStorage>();
  });
});

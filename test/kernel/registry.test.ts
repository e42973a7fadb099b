import { describe, expect, it } from "vitest";
import { definePlugin, RpcError, type AppRpcContext, type ResourceRegistry } from "../../kernel/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { closeAfterEach, rpc, sqliteMemory } from "../support/app.js";
import { keySessions } from "../support/key-sessions.js";

const build = closeAfterEach();
const v1 = schema("1").table("doc", (t) => ({ id: t.serial().primaryKey(), title: t.text(), ownerId: t.text() })).build();

const as = (id?: string): AppRpcContext => ({ user: id ? { id, email: "", name: id } : null } as AppRpcContext);
const outcome = (promise: Promise<void>) => promise.then(() => 200, (error: RpcError<any, any>) => error.status);

describe("the published resource registry", () => {
  it("describes each resource and authorizes like its procedures: 401, 404 for another owner's row, 200", async () => {
    let registry: ResourceRegistry | undefined;
    const reader = definePlugin({
      name: "reader",
      optionalDependencies: ["resources"],
      build: (ctx) => ctx.hooks.sealed.tap(() => (registry = ctx.want("resource-registry"))),
    });
    const built = build(
      new App({ db: sqliteMemory() })
        .schema(v1)
        .use(keySessions)
        .resource("doc", { ownerColumn: "ownerId", permissions: { create: "authenticated", update: "owner", delete: "admin" } })
        .use(reader),
    );
    await built.migrator.migrateToLatest();
    const created = await rpc(built, "doc.create", { title: "mine" }, { "x-api-key": "ada" });
    expect(created.status).toBe(200);

    const doc = registry!.get("doc")!;
    expect(doc).toMatchObject({
      name: "doc",
      primaryKey: "id",
      ownerColumn: "ownerId",
      permissions: { list: "public", get: "public", create: "authenticated", update: "owner", delete: "admin" },
      procedures: { list: "doc.list", update: "doc.update" },
    });
    const id = created.body.id;
    expect(await outcome(doc.authorize("update", as(), id))).toBe(401);
    expect(await outcome(doc.authorize("update", as("bob"), id))).toBe(404);
    expect(await outcome(doc.authorize("update", as("ada"), id))).toBe(200);
    expect(await outcome(doc.authorize("update", as("ada"), 999))).toBe(404);
    expect(await outcome(doc.authorize("delete", as("ada"), id))).toBe(403);
    expect(await outcome(doc.authorize("list", as()))).toBe(200);
  });

  it("tags resource procedures with what other surfaces need", () => {
    const built = build(new App({ db: sqliteMemory() }).schema(v1).resource("doc"));
    const meta = (built.router as any).doc.update["~orpc"].meta;
    expect(meta.resource).toEqual({ table: "doc", action: "update", key: "id" });
  });
});

// Permission rules by membership role: "member", "org:admin", "org:owner", { orgRole }, and the app's
// access-control statements ({ permission }), on resources and procedures.
import { createAccessControl } from "better-auth/plugins/access";
import { defaultStatements, adminAc, memberAc, ownerAc } from "better-auth/plugins/organization/access";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { declaredPermission } from "../../kernel/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { testApp, type Actor, type TestApp, type TestAppInput } from "../../presets/testing.js";

const ac = createAccessControl({ ...defaultStatements, task: ["create", "update", "delete"] } as const);
const roles = {
  owner: ac.newRole({ ...ownerAc.statements, task: ["create", "update", "delete"] }),
  admin: ac.newRole({ ...adminAc.statements, task: ["create", "update", "delete"] }),
  member: ac.newRole({ ...memberAc.statements, task: ["create"] }),
  billing: ac.newRole({ task: [] }),
};

const v1 = schema("1")
  .auth({ organizations: true })
  .table("task", (t) => ({ id: t.serial().primaryKey(), orgId: t.text().references("organization", "id"), title: t.text() }))
  .build();

function createApp({ db, secret }: TestAppInput) {
  return new App({ db, baseUrl: "http://localhost:3000", onError: () => {} })
    .schema(v1)
    .auth({ secret, emailAndPassword: { enabled: true }, organization: { ac, roles } })
    .resource("task", {
      tenant: "orgId",
      permissions: { list: "member", get: "member", create: { permission: { task: ["create"] } }, update: "org:admin", delete: { permission: { task: ["delete"] } } },
    })
    .procedure("billing.view", (base) => base.handler(() => "invoices"), { permission: { orgRole: ["billing", "owner"] } })
    .procedure("org.transfer", (base) => base.input(z.object({ to: z.string() })).handler(() => "ok"), { permission: "org:owner" })
    .channels({ "team:{topic}": { join: "member", send: "org:admin", events: { note: z.object({ text: z.string() }) } } });
}

type Who = Actor<any>;
const json = (body: unknown): RequestInit => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("organization permission rules", () => {
  let t: TestApp<typeof createApp>;
  let owner: Who;
  let admin: Who;
  let member: Who;
  let billing: Who;
  let outsider: Who;
  let org: string;

  async function call(who: Who | null, name: string, input: unknown) {
    const headers = new Headers(who?.headers);
    headers.set("content-type", "application/json");
    const response = await t.app.handle(new Request(`http://localhost:3000/rpc/${name.replaceAll(".", "/")}`, { method: "POST", headers, body: JSON.stringify({ json: input }) }));
    return { status: response.status, body: ((await response.json()) as { json: any }).json };
  }
  const joined = async (role: string) => {
    const who = await t.signUp();
    await t.app.db.insertInto("member").values({ id: `m-${who.user.id}`, organizationId: org, userId: who.user.id, role }).execute();
    expect((await who.fetch("/api/auth/organization/set-active", json({ organizationId: org }))).status).toBe(200);
    return who;
  };

  beforeAll(async () => {
    t = await testApp(createApp);
    owner = await t.signUp();
    const created = await owner.fetch("/api/auth/organization/create", json({ name: "Acme", slug: "acme" }));
    org = ((await created.json()) as { id: string }).id;
    admin = await joined("admin");
    member = await joined("member");
    billing = await joined("member,billing");
    outsider = await t.signUp();
  });
  afterAll(() => t?.close());

  it("\"member\" admits any member of the active organization", async () => {
    expect((await call(member, "task.list", {})).status).toBe(200);
    expect((await call(billing, "task.list", {})).status).toBe(200);
    expect((await call(outsider, "task.list", {})).body.code).toBe("NO_ACTIVE_ORGANIZATION");
  });

  it("{ permission } follows the app's access-control statements", async () => {
    const made = await call(member, "task.create", { title: "by a member" });
    expect(made.status).toBe(200);
    expect((await call(billing, "task.create", { title: "by billing, also a member" })).status).toBe(200);
    expect((await call(member, "task.delete", { where: { id: made.body.id } })).status).toBe(403);
    expect((await call(admin, "task.delete", { where: { id: made.body.id } })).status).toBe(200);
  });

  it("\"org:admin\" admits admins and owners, not members", async () => {
    const made = await call(owner, "task.create", { title: "x" });
    expect((await call(member, "task.update", { where: { id: made.body.id }, data: { title: "y" } })).status).toBe(403);
    expect((await call(admin, "task.update", { where: { id: made.body.id }, data: { title: "y" } })).status).toBe(200);
    expect((await call(owner, "task.update", { where: { id: made.body.id }, data: { title: "z" } })).status).toBe(200);
  });

  it("procedures: { orgRole } and \"org:owner\", refusals naming the rule", async () => {
    expect(await call(billing, "billing.view", {})).toMatchObject({ status: 200, body: "invoices" });
    expect(await call(owner, "billing.view", {})).toMatchObject({ status: 200 });
    const refused = await call(admin, "billing.view", {});
    expect(refused).toMatchObject({ status: 403, body: { message: "Requires organization role billing or owner in the active organization" } });
    expect((await call(null, "billing.view", {})).status).toBe(401);
    expect((await call(outsider, "billing.view", {})).body).toMatchObject({ code: "NO_ACTIVE_ORGANIZATION" });
    expect((await call(owner, "org.transfer", { to: "x" })).status).toBe(200);
    expect((await call(admin, "org.transfer", { to: "x" })).body).toMatchObject({ message: "Requires org:owner in the active organization" });
  });

  it("a role lost mid-session applies at the next request", async () => {
    const who = await joined("admin");
    const made = await call(owner, "task.create", { title: "demote" });
    expect((await call(who, "task.update", { where: { id: made.body.id }, data: { title: "ok" } })).status).toBe(200);
    await t.app.db.updateTable("member").set({ role: "member" }).where("userId", "=", who.user.id).execute();
    expect((await call(who, "task.update", { where: { id: made.body.id }, data: { title: "no" } })).status).toBe(403);
  });

  it("channels: join and send rules by membership role", async () => {
    const stream = (who: Who | null) => t.app.handle(new Request("http://localhost:3000/channels/sse?channel=team:plans", { headers: who?.headers }));
    expect((await stream(null)).status).toBe(401);
    const refused = await stream(outsider);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ code: "NO_ACTIVE_ORGANIZATION" });

    const frames = async function* (response: Response): AsyncGenerator<any, void> {
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      try {
        for (;;) {
          while (!buffer.includes("\n\n")) {
            const { done, value } = await reader.read();
            if (done) throw new Error("the stream ended");
            buffer += decoder.decode(value);
          }
          const at = buffer.indexOf("\n\n");
          const frame = JSON.parse(buffer.slice(0, at).replace(/^data: /, ""));
          buffer = buffer.slice(at + 2);
          if (frame.type !== "ping" && frame.type !== "presence") yield frame;
        }
      } finally {
        await reader.cancel();
      }
    };
    const opened = await stream(member);
    expect(opened.status).toBe(200);
    const received = frames(opened);
    const ready = (await received.next()).value;
    expect(ready.type).toBe("ready");
    expect((await received.next()).value).toMatchObject({ type: "joined", channel: "team:plans" });

    const post = (who: Who, token: string) => {
      const headers = new Headers(who.headers);
      headers.set("content-type", "application/json");
      return t.app.handle(new Request(`http://localhost:3000/channels/sse/${token}`, { method: "POST", headers, body: JSON.stringify({ type: "send", channel: "team:plans", event: "note", payload: { text: "hi" } }) }));
    };
    // A member may listen, not send: "org:admin" refuses with the rule named.
    const denied = await post(member, ready.token);
    expect(denied.status).toBe(403);
    expect(await denied.json()).toMatchObject({ message: "Requires org:admin in the active organization" });

    // An admin may send: the member listening receives it.
    const adminStream = await stream(admin);
    const adminFrames = frames(adminStream);
    const adminReady = (await adminFrames.next()).value;
    expect((await adminFrames.next()).value).toMatchObject({ type: "joined" });
    expect((await post(admin, adminReady.token)).status).toBe(204);
    expect((await received.next()).value).toMatchObject({ type: "message", channel: "team:plans", event: "note", payload: { text: "hi" } });
    await adminFrames.return(undefined);
    await received.return(undefined);
  });

  it("reports the rules to introspection", () => {
    const rule = (name: string) => declaredPermission(t.app.sealed.procedures.get(name)! as never);
    expect(rule("billing.view")).toBe("organization role billing or owner");
    expect(rule("org.transfer")).toBe("org:owner");
  });

  it("types the rules", () => {
    // Checked by the compiler (npx tsc), never run.
    const typed = (app: App<typeof v1>) => {
      app.resource("task", { tenant: "orgId", permissions: { list: "member", update: { orgRole: ["admin"] }, delete: { permission: { task: ["delete"] } } } });
      // @ts-expect-error orgRole takes a list of roles
      app.procedure("x", (base) => base.handler(() => 1), { permission: { orgRole: "admin" } });
      // @ts-expect-error not a rule
      app.procedure("y", (base) => base.handler(() => 1), { permission: "org:nobody" });
      // @ts-expect-error the tenant column is a column of the table
      app.resource("task", { tenant: "teamId" });
      const built = app.resource("task", { tenant: "orgId" }).build();
      // @ts-expect-error the tenant column comes from the session, never from the client
      void built.client({}).task.create({ title: "x", orgId: "other" });
    };
    expect(typeof typed).toBe("function");
  });
});

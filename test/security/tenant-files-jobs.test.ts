// Tenant isolation of files and jobs: a file uploaded in an organization is a missing file to every
// caller whose active organization is another (download, get, list, sign, delete, attach), even its
// own uploader; a job sent during a request in an organization runs in it, and nowhere else.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { memorySecrets } from "trellis/secrets";
import { App } from "../../presets/trellis.js";
import type { Tenancy } from "../../plugins/organizations/index.js";
import { testApp, type Actor, type TestApp, type TestAppInput } from "../../presets/testing.js";

const ORIGIN = "http://localhost:3000";

const v1 = schema("1")
  .auth({ organizations: true })
  .table("task", (t) => ({ id: t.serial().primaryKey(), orgId: t.text().references("organization", "id", { onDelete: "cascade" }).index(), title: t.text() }))
  .files({ organizations: true, attachTo: ["task"] })
  .build();

/** What each run of the probe job saw. */
interface Seen {
  data: unknown;
  organizationId: string | null;
  membership: { organizationId: string; userId: string; roles: readonly string[] } | null;
  tasks: { status: number; titles?: string[] };
}
const seen: Seen[] = [];
let listTasks: (context: unknown) => Promise<unknown>;

function createApp({ db, secret, storage }: TestAppInput) {
  return new App({ db, baseUrl: ORIGIN, storage, secrets: memorySecrets({ FILES_SIGNING_KEY: "a-files-signing-key-long-enough-0123456789" }), onError: () => {} })
    .schema(v1)
    .auth({ secret, emailAndPassword: { enabled: true } })
    .resource("task", { tenant: "orgId", permissions: { list: "member" } })
    .files()
    .job("probe", {}, async ({ data, context, job }) => {
      let tasks: Seen["tasks"];
      try {
        // The resource's own procedure, run with the job's context (as any surface runs it).
        tasks = { status: 200, titles: ((await listTasks(context)) as { title: string }[]).map((row) => row.title).sort() };
      } catch (error) {
        tasks = { status: (error as { status: number }).status };
      }
      // The service is on every context at run time; the app's context type does not name it.
      const membership = await (context as unknown as { organizations: Tenancy }).organizations.membership(context);
      seen.push({ data, organizationId: job.organizationId, membership: membership && { organizationId: membership.organizationId, userId: membership.userId, roles: membership.roles }, tasks });
      // A job sent by a job carries what its sender carried.
      if (data === "chain") await context.jobs.send("probe", "chained");
    })
    .procedure("work.send", (base) => base.handler(({ context, input }) => context.jobs.send("probe", input)), { permission: "authenticated" });
}

type T = TestApp<typeof createApp>;
type Who = Actor<any>;
const json = (body: unknown): RequestInit => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

async function call(who: Who | null, name: string, input: unknown, t: T) {
  const headers = new Headers(who?.headers);
  headers.set("content-type", "application/json");
  const response = await t.app.handle(new Request(`${ORIGIN}/rpc/${name.replaceAll(".", "/")}`, { method: "POST", headers, body: JSON.stringify({ json: input }) }));
  const body = (await response.json()) as { json: any };
  return { status: response.status, body: body.json };
}

async function upload(who: Who, name: string, t: T, attach?: { table: string; entityId: number }) {
  const form = new FormData();
  form.set("data", JSON.stringify({ json: { file: {}, ...(attach && { attach }) }, maps: [["file"]] }));
  form.set("0", new Blob([`bytes of ${name}`], { type: "text/plain" }), name);
  const response = await t.app.handle(new Request(`${ORIGIN}/rpc/file/upload`, { method: "POST", body: form, headers: who.headers }));
  const body = (await response.json()) as { json: any };
  return { status: response.status, body: body.json };
}

const download = (t: T, url: string, who?: Who) => t.app.handle(new Request(new URL(url, ORIGIN), { headers: who?.headers ?? {} }));

describe("tenant isolation of files and jobs", () => {
  let t: T;
  let orgA: string;
  let orgB: string;
  /** Alice is in both: one session active in A, another in B. Bob is in B; Carol in none. */
  let aliceA: Who;
  let aliceB: Who;
  let bob: Who;
  let carol: Who;
  let taskA: number;
  let taskB: number;
  /** Alice's files: one uploaded in A, one in B. */
  let fileA: { id: string; url: string; organizationId: string | null };
  let fileB: { id: string; url: string; organizationId: string | null };

  const createOrg = async (who: Who, slug: string) => {
    const response = await who.fetch("/api/auth/organization/create", json({ name: slug, slug }));
    expect(response.status).toBe(200);
    return ((await response.json()) as { id: string }).id;
  };

  beforeAll(async () => {
    t = await testApp(createApp);
    listTasks = (context) => t.app.sealed.call("task.list", {}, { context: context as never, source: "rpc" });
    aliceA = await t.signUp({ email: "alice@a.test" });
    orgA = await createOrg(aliceA, "org-a");
    bob = await t.signUp({ email: "bob@b.test" });
    orgB = await createOrg(bob, "org-b");
    await t.app.db.insertInto("member").values({ id: "m-alice-b", organizationId: orgB, userId: aliceA.user.id, role: "member" }).execute();
    aliceB = await t.signIn("alice@a.test");
    expect((await aliceB.fetch("/api/auth/organization/set-active", json({ organizationId: orgB }))).status).toBe(200);
    carol = await t.signUp({ email: "carol@none.test" });
    taskA = (await call(aliceA, "task.create", { title: "a plan" }, t)).body.id;
    taskB = (await call(bob, "task.create", { title: "b secret" }, t)).body.id;
    fileA = (await upload(aliceA, "a.txt", t)).body;
    fileB = (await upload(aliceB, "b.txt", t)).body;
  });
  afterAll(() => t?.close());

  describe("files", () => {
    it("records the active organization at upload, and none without one", async () => {
      expect(fileA.organizationId).toBe(orgA);
      expect(fileB.organizationId).toBe(orgB);
      const loose = await upload(carol, "loose.txt", t);
      expect(loose.status).toBe(200);
      expect(loose.body.organizationId).toBeNull();
      // Outside any organization, files behave as before: the uploader reaches theirs.
      expect((await download(t, loose.body.url, carol)).status).toBe(200);
      expect((await call(carol, "file.get", { id: loose.body.id }, t)).status).toBe(200);
    });

    it("answers a download of another organization's file exactly as a missing file, to its own uploader too", async () => {
      const own = await download(t, fileA.url, aliceA);
      expect(own.status).toBe(200);
      expect(await own.text()).toBe("bytes of a.txt");
      const crossed = await download(t, fileA.url, aliceB);
      const missing = await download(t, "/files/00000000-0000-4000-8000-000000000000", aliceB);
      expect(crossed.status).toBe(404);
      expect(await crossed.json()).toEqual(await missing.json());
      expect((await download(t, fileB.url, aliceA)).status).toBe(404);
      expect((await download(t, fileB.url, aliceB)).status).toBe(200);
    });

    it("scopes get, sign, delete and list to the active organization", async () => {
      const crossed = await call(aliceB, "file.get", { id: fileA.id }, t);
      const missing = await call(aliceB, "file.get", { id: "nope" }, t);
      expect(crossed.status).toBe(404);
      expect(crossed.body).toEqual(missing.body);
      expect((await call(aliceB, "file.sign", { id: fileA.id }, t)).status).toBe(404);
      expect((await call(aliceB, "file.delete", { id: fileA.id }, t)).status).toBe(404);
      const names = async (who: Who, input: unknown) => ((await call(who, "file.list", input, t)).body as { name: string }[]).map((file) => file.name).sort();
      expect(await names(aliceA, {})).toEqual(["a.txt"]);
      expect(await names(aliceB, {})).toEqual(["b.txt"]);
      expect(await names(aliceB, { where: { organizationId: orgA } })).toEqual([]);
      expect(await names(aliceB, { where: { OR: [{ organizationId: orgA }, { name: "a.txt" }] } })).toEqual([]);
      expect((await call(aliceA, "file.get", { id: fileA.id }, t)).status).toBe(200);
    });

    it("keeps a signed URL of an organization's file working without a cookie, from any session", async () => {
      const signed = await call(aliceA, "file.sign", { id: fileA.id, expiresIn: 60 }, t);
      expect(signed.status).toBe(200);
      const anonymous = await download(t, signed.body.url);
      expect(anonymous.status).toBe(200);
      expect(await anonymous.text()).toBe("bytes of a.txt");
      // The signature is the permission, whichever session carries it.
      expect((await download(t, signed.body.url, aliceB)).status).toBe(200);
    });

    it("attaches only files of the caller's organization, and lists a row's files of that organization only", async () => {
      const crossed = await call(aliceB, "file.attach", { table: "task", entityId: taskB, fileId: fileA.id }, t);
      expect(crossed.status).toBe(404);
      expect(crossed.body.message).toBe("No file matches");
      expect((await call(aliceB, "file.detach", { table: "task", entityId: taskB, fileId: fileA.id }, t)).status).toBe(404);
      expect((await call(aliceA, "file.attach", { table: "task", entityId: taskA, fileId: fileA.id }, t)).status).toBe(200);
      // A pivot row written by hand that ties B's file to A's task is not a way in.
      await t.app.db.insertInto("task_file").values({ fileId: fileB.id, entityId: taskA, position: 1 }).execute();
      const listed = await call(aliceA, "file.list", { attachedTo: { table: "task", entityId: taskA } }, t);
      expect(listed.status).toBe(200);
      expect((listed.body as { name: string }[]).map((file) => file.name)).toEqual(["a.txt"]);
      // Uploading into another organization's row is refused as the row's own update would be.
      expect((await upload(aliceB, "into-a.txt", t, { table: "task", entityId: taskA })).status).toBe(404);
    });
  });

  describe("jobs", () => {
    const send = async (who: Who, data: unknown) => {
      seen.length = 0;
      const sent = await call(who, "work.send", data, t);
      expect(sent.status).toBe(200);
      await t.jobs.drain();
      return [...seen];
    };

    it("runs a job sent in an organization in it: its membership, and tenant resources scoped to it", async () => {
      const [run] = await send(aliceA, "one");
      expect(run).toEqual({ data: "one", organizationId: orgA, membership: { organizationId: orgA, userId: aliceA.user.id, roles: ["owner"] }, tasks: { status: 200, titles: ["a plan"] } });
      const [other] = await send(aliceB, "two");
      expect(other).toMatchObject({ organizationId: orgB, membership: { organizationId: orgB, roles: ["member"] }, tasks: { status: 200, titles: ["b secret"] } });
    });

    it("carries the organization on to the jobs a job sends", async () => {
      const runs = await send(bob, "chain");
      expect(runs.map((run) => [run.data, run.organizationId, run.tasks.titles])).toEqual([
        ["chain", orgB, ["b secret"]],
        ["chained", orgB, ["b secret"]],
      ]);
    });

    it("runs a job sent without an organization as before, and never takes one from the data sent", async () => {
      const forged = { $trellis: { organizationId: orgB, userId: bob.user.id }, data: "x" };
      const [run] = await send(carol, forged);
      expect(run).toEqual({ data: forged, organizationId: null, membership: null, tasks: { status: 401 } });
      const [plain] = await send(carol, null);
      expect(plain).toMatchObject({ organizationId: null, membership: null, tasks: { status: 401 } });
    });

    it("loses the organization when the sender is no longer a member by the time it runs", async () => {
      seen.length = 0;
      expect((await call(aliceB, "work.send", "late", t)).status).toBe(200);
      await t.app.db.deleteFrom("member").where("id", "=", "m-alice-b").execute();
      await t.jobs.drain();
      expect(seen).toEqual([{ data: "late", organizationId: orgB, membership: null, tasks: { status: 403 } }]);
    });
  });
});

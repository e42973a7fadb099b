/**
 * `npm run bench -- tenant`: a tenant-scoped resource (`tenant: "orgId"`, the caller's active
 * organization confirmed by a member row) against the same table scoped by owner only, both behind
 * a signed-in session: list 20 and get by key. Target: tenant / owner >= 0.95.
 */
import { embedded } from "../../kernel/embedded/index.js";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { signUp, ORIGIN } from "../support/auth.js";
import { compare, print } from "./measure.js";

const SECRET = "bench-secret-bench-secret-bench-secret-0123";
const columns = (t: any) => ({
  id: t.serial().primaryKey(),
  orgId: t.text().references("organization", "id").index(),
  ownerId: t.text().references("user", "id").index(),
  title: t.text(),
  body: t.text(),
});
const v1 = schema("1").auth({ organizations: true }).table("task", columns).table("mine", columns).build();

function post(path: string, input: unknown, cookie: string) {
  return new Request(`${ORIGIN}/rpc/${path}`, { method: "POST", headers: { "content-type": "application/json", cookie, origin: ORIGIN }, body: JSON.stringify({ json: input }) });
}

export async function run(): Promise<void> {
  const app = await new App({ baseUrl: ORIGIN, db: embedded({ dataDir: "memory://" }), onError: () => {} })
    .schema(v1)
    .auth({ secret: SECRET, emailAndPassword: { enabled: true } })
    .resource("task", { tenant: "orgId", permissions: { list: "authenticated", get: "authenticated" } })
    .resource("mine", { ownerColumn: "ownerId", permissions: { list: "owner", get: "owner" } })
    .start();
  const user = await signUp(app, "bench@example.test");
  const response = await app.handle(new Request(`${ORIGIN}/api/auth/organization/create`, { method: "POST", headers: { "content-type": "application/json", cookie: user.cookie, origin: ORIGIN }, body: JSON.stringify({ name: "Bench", slug: "bench" }) }));
  const org = ((await response.json()) as { id: string }).id;
  // Another organization and another user with as many rows, so each scope has rows to leave out.
  await app.db.insertInto("organization").values({ id: "other", name: "Other", slug: "other" }).execute();
  const other = await signUp(app, "other@example.test");
  for (const table of ["task", "mine"] as const) {
    const rows = [];
    for (let i = 0; i < 2000; i++) rows.push({ orgId: i % 2 ? org : "other", ownerId: i % 2 ? user.userId : other.userId, title: `task ${i}`, body: "x".repeat(200) });
    await app.db.insertInto(table).values(rows).execute();
  }
  const list = (table: string) => () => post(`${table}/list`, { take: 20 }, user.cookie);
  const get = (table: string) => () => post(`${table}/get`, { where: { id: 8 } }, user.cookie);
  for (const make of [list("task"), list("mine")]) {
    const check = (await (await app.handle(make())).json()) as { json: unknown[] };
    if (check.json?.length !== 20) throw new Error(`list answered ${JSON.stringify(check).slice(0, 200)}`);
  }
  for (const make of [get("task"), get("mine")]) {
    const answer = await app.handle(make());
    if (answer.status !== 200) throw new Error(`get answered ${answer.status} ${await answer.text()}`);
  }
  const options = { rounds: 3, warmup: 200, count: 1500 };
  const listStats = await compare(
    [
      { name: "owner-scoped: mine.list (20)", op: async () => (await app.handle(list("mine")())).text() },
      { name: "tenant-scoped: task.list (20)", op: async () => (await app.handle(list("task")())).text() },
    ],
    options,
  );
  print("Signed-in list 20: tenant against owner", listStats, { of: "tenant-scoped: task.list (20)", to: "owner-scoped: mine.list (20)", target: 0.95 });
  const getStats = await compare(
    [
      { name: "owner-scoped: mine.get", op: async () => (await app.handle(get("mine")())).text() },
      { name: "tenant-scoped: task.get", op: async () => (await app.handle(get("task")())).text() },
    ],
    options,
  );
  print("Signed-in get by key: tenant against owner", getStats, { of: "tenant-scoped: task.get", to: "owner-scoped: mine.get", target: 0.95 });
  await app.close();
}

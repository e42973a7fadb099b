// `.backups()`: backups to a directory or the app's storage with retention, `_admin.backups.*`
// behind the admin role (401, then 403, before validation), a failure that is visible and never
// stops the app, and the schedule through the jobs plugin.
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { embedded, unopenedEmbedded } from "../../kernel/embedded/index.js";
import { schema } from "../../kernel/schema/index.js";
import { memoryStorage } from "../../kernel/storage/index.js";
import { createClient } from "../../presets/client.js";
import { App } from "../../presets/trellis.js";
import type { AdminBackupsRouter } from "../../plugins/backups/index.js";
import { everyMinute, matches, parseCron } from "../../plugins/backups/schedule.js";
import { rpc } from "../support/app.js";
import { openDatabase } from "../support/databases.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";

const v1 = schema("1").auth().table("note", (t) => ({ id: t.serial().primaryKey(), body: t.text() })).build();
const secret = "a-test-secret-that-is-long-enough-0123456789";

/** An app with `.backups(backups)`; on a new in-memory embedded database unless `options.db` names one. */
function adminApp(backups: Parameters<App<any, any, any>["backups"]>[0], options: Partial<ConstructorParameters<typeof App>[0]> = {}) {
  return new App({ baseUrl: ORIGIN, onError: () => undefined, ...options, db: options.db ?? embedded({ dataDir: "memory://" }) })
    .schema(v1)
    .auth({ secret, emailAndPassword: { enabled: true } })
    .admin({ ui: false })
    .backups(backups);
}

async function admins(app: any): Promise<{ admin: SignedIn; alice: SignedIn }> {
  const admin = await signUp(app, "admin@example.test");
  const alice = await signUp(app, "alice@example.test");
  await app.db.updateTable("user").set({ role: "admin" }).where("id", "=", admin.userId).execute();
  return { admin, alice };
}

describe(".backups() to a directory", () => {
  const dir = join(mkdtempSync(join(tmpdir(), "trellis-backups-")), "kept");
  let app: any;
  let admin: SignedIn;
  let alice: SignedIn;
  const call = (name: string, input?: unknown, who: SignedIn | null = admin) => rpc(app, `_admin.backups.${name}`, input, who ? { cookie: who.cookie } : {});

  beforeAll(async () => {
    app = await adminApp({ to: dir, keep: 2 }).start();
    ({ admin, alice } = await admins(app));
  }, 60_000);
  afterAll(() => app?.close());

  it("answers 401 signed out and 403 without an admin role, before validating input", async () => {
    for (const [name, input] of [["list", undefined], ["take", undefined], ["download", { name: 1 }]] as const) {
      expect((await call(name, input, null)).status).toBe(401);
      const refused = await call(name, input, alice);
      expect(refused.status).toBe(403);
    }
    expect(readdirSync(join(dir, "..")).includes("kept")).toBe(false);
  });

  it("takes one now, lists it with its size and time, keeps the newest two", { timeout: 120_000 }, async () => {
    const first = await call("take");
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ name: expect.stringMatching(/^backup-.*\.tar\.gz$/), size: expect.any(Number), createdAt: expect.any(String) });
    expect(first.body.size).toBeGreaterThan(1000);
    const second = (await call("take")).body;
    const third = (await call("take")).body;
    const { status, body } = await call("list");
    expect(status).toBe(200);
    expect(body).toMatchObject({ where: dir, kind: "embedded data directory, gzip tarball", every: null, scheduler: null, keep: 2, running: false, lastFailure: null });
    expect(body.backups.map((b: { name: string }) => b.name)).toEqual([third.name, second.name]);
    expect(readdirSync(dir).sort()).toEqual([second.name, third.name].sort());
    // They hold password hashes and session tokens: readable by the owner only, whatever the umask.
    for (const name of readdirSync(dir)) expect((statSync(join(dir, name)).mode & 0o777).toString(8)).toBe("600");
  });

  it("downloads one as a gzip file; a bad name is 400, an unknown one 404", async () => {
    const [newest] = (await call("list")).body.backups;
    const client = createClient<{ _admin: { backups: AdminBackupsRouter } }>({ url: ORIGIN, headers: { cookie: admin.cookie }, fetch: (input, init) => app.handle(new Request(input as RequestInfo, init)) });
    const file = await client._admin.backups.download({ name: newest.name });
    expect(file.name).toBe(newest.name);
    const bytes = new Uint8Array(await file.arrayBuffer());
    expect(bytes.byteLength).toBe(newest.size);
    expect([bytes[0], bytes[1]]).toEqual([0x1f, 0x8b]);
    const bad = await call("download", { name: "../../etc/passwd" });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/name/);
    const missing = await call("download", { name: "backup-2020-01-01T00-00-00-000Z.tar.gz" });
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe("No backup backup-2020-01-01T00-00-00-000Z.tar.gz");
  });

  it("streams one at /_admin/backups/<name> behind the admin role; a bad name is 400, an unknown one 404", async () => {
    const [newest] = (await call("list")).body.backups;
    const get = (name: string, who: SignedIn | null) => app.handle(new Request(`${ORIGIN}/_admin/backups/${name}`, { headers: who ? { cookie: who.cookie } : {} }));
    expect((await get(newest.name, null)).status).toBe(401);
    expect((await get(newest.name, alice)).status).toBe(403);
    const response = await get(newest.name, admin);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/gzip");
    expect(response.headers.get("content-disposition")).toBe(`attachment; filename="${newest.name}"`);
    expect(Buffer.from(await response.arrayBuffer()).equals(readFileSync(join(dir, newest.name)))).toBe(true);
    const bad = await get("..%2Fsecret", admin);
    expect(bad.status).toBe(400);
    expect((await bad.json()).message).toMatch(/not a backup name/);
    const missing = await get("backup-2020-01-01T00-00-00-000Z.tar.gz", admin);
    expect(missing.status).toBe(404);
    expect((await missing.json()).message).toBe("No backup backup-2020-01-01T00-00-00-000Z.tar.gz");
  });
});

describe(".backups() to the app's storage", () => {
  let app: any;
  let admin: SignedIn;
  let failing = false;
  const storage = memoryStorage();
  const flaky = { ...storage, set: (key: string, bytes: Uint8Array) => (failing ? Promise.reject(new Error("the object store is unreachable")) : storage.set(key, bytes)) };
  const errors: unknown[] = [];
  const call = (name: string, input?: unknown) => rpc(app, `_admin.backups.${name}`, input, { cookie: admin.cookie });

  beforeAll(async () => {
    app = await adminApp({ to: "storage", keep: 3 }, { storage: flaky, onError: (error: unknown) => void errors.push(error) }).start();
    ({ admin } = await admins(app));
  }, 60_000);
  afterAll(() => app?.close());

  it("writes under backups/ and lists from there", { timeout: 120_000 }, async () => {
    const taken = await call("take");
    expect(taken.status).toBe(200);
    expect(await storage.get(`backups/${taken.body.name}`)).toHaveLength(taken.body.size);
    const { body } = await call("list");
    expect(body.where).toBe("storage (backups/)");
    expect(body.backups).toEqual([taken.body]);
  });

  it("a failed backup answers why, shows as the last failure, and the app keeps serving", { timeout: 120_000 }, async () => {
    failing = true;
    const failed = await call("take");
    expect(failed.status).toBe(500);
    expect(failed.body.message).toBe("The backup failed: the object store is unreachable");
    const { body } = await call("list");
    expect(body.lastFailure).toEqual({ at: expect.any(String), message: "the object store is unreachable" });
    expect(body.backups).toHaveLength(1);
    expect((await rpc(app, "_admin.meta", undefined, { cookie: admin.cookie })).status).toBe(200);
    failing = false;
    expect((await call("take")).status).toBe(200);
    expect((await call("list")).body.lastFailure).toBeNull();
  });
});

describe(".backups() scheduling", () => {
  it("refuses a bad option, a storage target without storage, and SQLite, naming the problem", async () => {
    // Refused before anything is served: an embedded database that is never opened (a real one
    // would start an instance that nothing closes).
    const db = () => unopenedEmbedded("memory://", "this app is only built");
    expect(() => adminApp({ every: "every night", keep: 0 }, { db: db() })).toThrow(/BACKUPS_BAD_OPTION|every must be a cron expression.*keep must be a whole number/);
    await expect(async () => adminApp({ to: "storage" }, { db: db() }).build()).rejects.toMatchObject({ code: "BACKUPS_NO_STORAGE" });
    const sqlite = await openDatabase("sqlite");
    try {
      await expect(async () => adminApp({}, { db: { dialect: sqlite.dialect, kind: sqlite.kind } }).build()).rejects.toMatchObject({ code: "BACKUPS_UNSUPPORTED", message: expect.stringContaining("SQLite") });
    } finally {
      await sqlite.close();
    }
  });

  it("matches cron expressions minute by minute in UTC", () => {
    const nightly = parseCron("0 3 * * *")!;
    expect(matches(nightly, new Date("2026-11-25T03:00:00Z"))).toBe(true);
    expect(matches(nightly, new Date("2026-11-25T03:01:00Z"))).toBe(false);
    const quarter = parseCron("*/15 9-17 * * 1-5")!;
    expect(matches(quarter, new Date("2026-11-25T09:45:00Z"))).toBe(true); // a Wednesday
    expect(matches(quarter, new Date("2026-11-29T09:45:00Z"))).toBe(false); // a Sunday
    // Day of month and weekday both restricted: either runs (the 1st, and every Monday).
    const firstOrMonday = parseCron("0 3 1 * 1")!;
    expect(matches(firstOrMonday, new Date("2026-12-01T03:00:00Z"))).toBe(true); // a Tuesday, the 1st
    expect(matches(firstOrMonday, new Date("2026-11-30T03:00:00Z"))).toBe(true); // a Monday
    expect(matches(firstOrMonday, new Date("2026-11-25T03:00:00Z"))).toBe(false);
    // One of them a wildcard: both must match.
    expect(matches(parseCron("0 3 * * 1")!, new Date("2026-12-01T03:00:00Z"))).toBe(false);
    expect(matches(parseCron("0 3 1 * *")!, new Date("2026-11-30T03:00:00Z"))).toBe(false);
    expect(parseCron("60 * * * *")).toBeUndefined();
    expect(parseCron("* * * *")).toBeUndefined();
  });

  it("without .jobs(), a timer in the process runs at each matching minute", () => {
    vi.useFakeTimers({ now: new Date("2026-11-25T02:58:30Z") });
    try {
      const runs: string[] = [];
      const stop = everyMinute(parseCron("0 3 * * *")!, () => runs.push(new Date().toISOString().slice(11, 16)));
      vi.advanceTimersByTime(60_000);
      expect(runs).toEqual([]);
      vi.advanceTimersByTime(60_000);
      expect(runs).toEqual(["03:00"]);
      vi.advanceTimersByTime(24 * 60 * 60_000);
      expect(runs).toEqual(["03:00", "03:00"]);
      stop();
      vi.advanceTimersByTime(24 * 60 * 60_000);
      expect(runs).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it("with .jobs(), runs as the backups.run cron, once per tick across replicas", { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "trellis-backups-jobs-"));
    const app: any = await adminApp({ every: "0 3 * * *", to: dir }).jobs({ pollingInterval: 0.5 }).start();
    try {
      const { admin } = await admins(app);
      const queues = await rpc(app, "_admin.jobs.queues", undefined, { cookie: admin.cookie });
      expect(queues.body).toContainEqual(expect.objectContaining({ name: "backups.run", kind: "cron", cron: "0 3 * * *", owner: "plugin" }));
      expect((await rpc(app, "_admin.backups.list", undefined, { cookie: admin.cookie })).body).toMatchObject({ every: "0 3 * * *", scheduler: "jobs" });
      // A tick is a job of that kind: send one rather than wait for 03:00.
      const jobs = app.sealed.service("jobs");
      const id = await jobs.send("backups.run");
      const deadline = Date.now() + 60_000;
      while ((await jobs.get("backups.run", id))?.state !== "completed") {
        if (Date.now() > deadline) throw new Error(`the backup job did not complete: ${JSON.stringify(await jobs.get("backups.run", id))}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(readdirSync(dir).filter((name) => name.endsWith(".tar.gz"))).toHaveLength(1);
    } finally {
      await app.close();
    }
  });
});

// Webhooks of a tenant resource's writes name the organization the rows belong to.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../kernel/schema/index.js";
import { App } from "../../presets/trellis.js";
import { testApp, type TestApp, type TestAppInput } from "../../presets/testing.js";

const SECRET = `whsec_${Buffer.from("a-webhook-secret-of-32-bytes!!!!").toString("base64")}`;
const v1 = schema("1")
  .auth({ organizations: true })
  .table("task", (t) => ({ id: t.serial().primaryKey(), orgId: t.text().references("organization", "id"), title: t.text() }))
  .build();

const json = (body: unknown): RequestInit => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("webhooks of a tenant resource", () => {
  let server: Server;
  const received: any[] = [];
  let t: TestApp<any>;
  beforeAll(async () => {
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk) => chunks.push(chunk));
      request.on("end", () => {
        received.push(JSON.parse(Buffer.concat(chunks).toString("utf8")));
        response.statusCode = 204;
        response.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    t = await testApp(({ db, secret }: TestAppInput) =>
      new App({ db, baseUrl: "http://localhost:3000", onError: () => {} })
        .schema(v1)
        .auth({ secret, emailAndPassword: { enabled: true } })
        .resource("task", { tenant: "orgId" })
        .webhooks({ endpoints: [{ url, secret: SECRET, tables: ["task"] }] }),
    );
  });
  afterAll(async () => {
    await t?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  it("carries organizationId beside the keys", async () => {
    const ada = await t.signUp();
    const org = ((await (await ada.fetch("/api/auth/organization/create", json({ name: "Acme", slug: "acme" }))).json()) as { id: string }).id;
    const created = await ada.client.task.create({ title: "hooked" });
    await t.jobs.drain();
    expect(received).toEqual([{ type: "task.insert", timestamp: expect.any(String), data: { table: "task", op: "insert", keys: [created.id], organizationId: org } }]);
  });
});

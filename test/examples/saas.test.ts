import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InferRouter } from "trellis";
import { testApp, type TestApp } from "trellis/testing";
import { createSaas } from "../../examples/saas/app.js";

const json = (body: unknown): RequestInit => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("examples/saas: team tasks", () => {
  let t: TestApp<InferRouter<ReturnType<typeof createSaas>>>;
  beforeAll(async () => void (t = await testApp(({ db, secret }) => createSaas(db, { secret, onError: () => {} }))));
  afterAll(() => t?.close());

  it("signs up, creates a team, invites by mail, and keeps each team's tasks to itself", async () => {
    const ada = await t.signUp({ name: "Ada", email: "ada@saas.test" });
    expect((await ada.fetch("/api/auth/organization/create", json({ name: "Acme", slug: "acme" }))).status).toBe(200);
    const project = await ada.client.project.create({ name: "Launch" });
    await ada.client.task.create({ projectId: project.id, title: "Write the announcement" });

    const invited = await ada.fetch("/api/auth/organization/invite-member", json({ email: "bo@saas.test", role: "member" }));
    const { id } = (await invited.json()) as { id: string };
    const [mail] = await t.outbox({ to: "bo@saas.test" });
    expect(mail.text).toContain(`/invite/${id}`);
    const bo = await t.signUp({ email: "bo@saas.test" });
    expect((await bo.fetch("/api/auth/organization/accept-invitation", json({ invitationId: id }))).status).toBe(200);

    // A member works on the team's tasks, but projects are for admins and deletes for admins or owners.
    expect((await bo.client.task.list({})).map((task) => task.title)).toEqual(["Write the announcement"]);
    const mine = await bo.client.task.create({ projectId: project.id, title: "Review it" });
    await expect(bo.client.project.create({ name: "Side project" })).rejects.toMatchObject({ status: 403 });
    await expect(bo.client.task.delete({ where: { id: mine.id } })).rejects.toMatchObject({ status: 403 });
    expect(await ada.client.task.delete({ where: { id: mine.id } })).toMatchObject({ title: "Review it" });

    // Another team sees none of it.
    const cy = await t.signUp({ email: "cy@saas.test" });
    await cy.fetch("/api/auth/organization/create", json({ name: "Other", slug: "other" }));
    expect(await cy.client.task.list({})).toEqual([]);
    await expect(cy.client.project.get({ where: { id: project.id } })).rejects.toMatchObject({ status: 404 });
  });
});

import { afterEach, expect, test } from "vitest";
import { testApp, type TestApp } from "trellis/testing";
import createApp from "../src/app.js";

let t: TestApp<any>;
afterEach(() => t?.close());

const post = (body: unknown): RequestInit => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

test("a team's tasks: create an organization, invite by mail, members see the team's rows and no other", async () => {
  t = await testApp(createApp);
  const ada = await t.signUp({ email: "ada@example.com", name: "Ada" });
  // Its creator is its owner, and it becomes the active organization of her session.
  const created = await ada.fetch("/api/auth/organization/create", post({ name: "Acme", slug: "acme" }));
  expect(created.status).toBe(200);
  const project = await ada.client.project.create({ name: "Launch" });
  const task = await ada.client.task.create({ title: "Write the announcement", projectId: project.id });
  expect(task).toMatchObject({ title: "Write the announcement", createdBy: ada.user.id, done: false });

  // Ada invites Bob; the mail links to the invitation.
  const invited = await ada.fetch("/api/auth/organization/invite-member", post({ email: "bob@example.com", role: "member" }));
  expect(invited.status).toBe(200);
  const invitation = (await invited.json()) as { id: string };
  const [mail] = await t.outbox({ to: "bob@example.com" });
  expect(mail.text).toContain(`/invite/${invitation.id}`);

  // Bob accepts: the organization becomes his active one, and its tasks are his to see.
  const bob = await t.signUp({ email: "bob@example.com" });
  expect((await bob.fetch("/api/auth/organization/accept-invitation", post({ invitationId: invitation.id }))).status).toBe(200);
  expect((await bob.client.task.list({})).map((row: { title: string }) => row.title)).toEqual(["Write the announcement"]);
  expect(await bob.client.task.open()).toBe(1);
  // A member creates and updates tasks, but only admins and owners delete them or add projects.
  await bob.client.task.update({ where: { id: task.id }, data: { done: true } });
  await expect(bob.client.task.delete({ where: { id: task.id } })).rejects.toMatchObject({ status: 403 });
  await expect(bob.client.project.create({ name: "Side project" })).rejects.toMatchObject({ status: 403 });

  // Carl's team sees none of Acme's rows: a guessed id is a 404, as a missing row is.
  const carl = await t.signUp({ email: "carl@example.com" });
  await carl.fetch("/api/auth/organization/create", post({ name: "Other", slug: "other" }));
  expect(await carl.client.task.list({})).toEqual([]);
  await expect(carl.client.task.get({ where: { id: task.id } })).rejects.toMatchObject({ status: 404 });
  await ada.client.task.delete({ where: { id: task.id } });
});

test("signed-out callers and users with no organization are refused", async () => {
  t = await testApp(createApp);
  await expect(t.anonymous.client.task.list({})).rejects.toMatchObject({ status: 401 });
  const dora = await t.signUp();
  await expect(dora.client.task.list({})).rejects.toMatchObject({ status: 403, code: "NO_ACTIVE_ORGANIZATION" });
  const health = await t.anonymous.fetch("/health");
  expect(health.status).toBe(200);
});

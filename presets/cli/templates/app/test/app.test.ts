import { afterEach, expect, test } from "vitest";
import { testApp, type TestApp } from "trellis/testing";
import createApp from "../src/app.js";

let t: TestApp<any>;
afterEach(() => t?.close());

test("each user sees only their own notes", async () => {
  t = await testApp(createApp);
  const ada = await t.signUp({ email: "ada@example.com" });
  const bob = await t.signUp({ email: "bob@example.com" });

  const note = await ada.client.note.create({ title: "Groceries" });
  expect(note).toMatchObject({ title: "Groceries", ownerId: ada.user.id });
  expect(await ada.client.note.count()).toBe(1);
  expect(await bob.client.note.list({})).toEqual([]);
  await expect(bob.client.note.get({ where: { id: note.id } })).rejects.toMatchObject({ status: 404 });
});

test("signed-out callers are refused", async () => {
  t = await testApp(createApp);
  await expect(t.anonymous.client.note.create({ title: "x" })).rejects.toMatchObject({ status: 401 });
  const health = await t.anonymous.fetch("/health");
  expect(health.status).toBe(200);
});

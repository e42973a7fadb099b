import { afterEach, expect, test } from "vitest";
import { App } from "trellis";
import { schema } from "trellis/schema";
import { testApp, type TestApp } from "trellis/testing";
import plugin from "../src/index.js";

const v1 = schema("1").auth().build();

let t: TestApp<any>;
afterEach(() => t?.close());

test("answers its procedure and tags every response", async () => {
  t = await testApp(({ db, secret }) =>
    new App({ name: "plugin-test", baseUrl: "http://localhost:3000", db }).schema(v1).auth({ secret, emailAndPassword: { enabled: true } }).use(plugin({ greeting: "hi" })),
  );
  const ada = await t.signUp({ name: "Ada" });
  const response = await ada.fetch("/rpc/greeting/hello", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  expect(response.headers.get("x-greeting")).toBe("hi");
  expect(await response.json()).toEqual({ json: "hi Ada" });
});

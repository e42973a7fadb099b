/** `POST /rest/file/upload`: plain multipart/form-data, the same limits, statuses and rows as `/rpc`. */
import { compileErrors, validate } from "@readme/openapi-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type TestDatabase } from "../support/databases.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";
import { bytes, filesApp, trackedStorage, upload, uploadForm } from "./fixture.js";

describe("POST /rest/file/upload", () => {
  let database: TestDatabase;
  let app: Awaited<ReturnType<ReturnType<typeof filesApp>["start"]>>;
  let ada: SignedIn;
  let bo: SignedIn;
  const storage = trackedStorage();
  beforeAll(async () => {
    database = await openDatabase("sqlite");
    app = await filesApp(database, { storage, files: { maxBytes: 64 * 1024, accept: ["image/*"] } })
      .openapi()
      .start();
    ada = await signUp(app, "ada@example.test");
    bo = await signUp(app, "bo@example.test");
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  const form = (file: Blob | undefined, fields: Record<string, string> = {}, name = "photo.png") => {
    const body = new FormData();
    for (const [key, value] of Object.entries(fields)) body.set(key, value);
    if (file) body.set("file", file, name);
    return body;
  };
  const post = async (body: BodyInit, who?: SignedIn, headers: Record<string, string> = {}) => {
    const response = await app.handle(
      new Request(`${ORIGIN}/rest/file/upload`, { method: "POST", body, headers: { origin: ORIGIN, ...(who && { cookie: who.cookie }), ...headers } }),
    );
    return { status: response.status, type: response.headers.get("content-type"), body: await response.json() };
  };
  const png = (size = 100) => new Blob([bytes(size)], { type: "image/png" });

  it("stores the file and answers the record as plain JSON, the row as /rpc writes it", async () => {
    const sent = await post(form(png(5000)), ada);
    expect(sent).toMatchObject({ status: 200, type: "application/json", body: { name: "photo.png", type: "image/png", size: 5000, userId: ada.userId } });
    expect(sent.body.createdAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(sent.body.url).toBe(`/files/${sent.body.id}`);
    const row = await app.db.selectFrom("file").selectAll().where("id", "=", sent.body.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ name: "photo.png", type: "image/png", size: 5000, userId: ada.userId });
    expect(await storage.get(row.key as string)).toEqual(bytes(5000));
    const download = await app.handle(new Request(`${ORIGIN}${sent.body.url}`, { headers: { cookie: ada.cookie } }));
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(bytes(5000));
  });

  it("attaches with an attach field holding JSON, checked as on /rpc", async () => {
    const created = await app.handle(
      new Request(`${ORIGIN}/rest/post`, { method: "POST", headers: { origin: ORIGIN, cookie: ada.cookie, "content-type": "application/json" }, body: JSON.stringify({ title: "Hello" }) }),
    );
    const postId = ((await created.json()) as { id: number }).id;
    const attach = JSON.stringify({ table: "post", entityId: postId, role: "cover" });
    const sent = await post(form(png(), { attach }), ada);
    expect(sent.status).toBe(200);
    const listed = await app.client({ cookie: ada.cookie }).file.list({ attachedTo: { table: "post", entityId: postId } });
    expect(listed.map((file) => [file.id, file.attachment])).toEqual([[sent.body.id, { role: "cover", position: 0 }]]);
    const keys = storage.keys().length;
    const notTheirs = await post(form(png(), { attach }), bo);
    const viaRpc = await upload(app, uploadForm(png(), "p.png", { attach: { table: "post", entityId: postId } }), { cookie: bo.cookie });
    expect(notTheirs.status).toBe(viaRpc.status);
    expect(notTheirs.body).toMatchObject({ code: viaRpc.body.code, message: viaRpc.body.message });
    expect(storage.keys().length).toBe(keys);
    expect(await post(form(png(), { attach: "{nope" }), ada)).toMatchObject({ status: 400, body: { message: 'attach must be JSON, such as {"table":"post","entityId":1}' } });
  });

  it("answers the statuses /rpc answers: 401, 413, 415, 400 without a file; 415 for a body that is not multipart", async () => {
    const keys = storage.keys().length;
    expect(await post(form(png()))).toMatchObject({ status: 401, body: { code: "UNAUTHORIZED" } });
    expect(await post(form(png(64 * 1024 + 1)), ada)).toMatchObject({ status: 413, body: { code: "PAYLOAD_TOO_LARGE", message: "File is larger than 65536 bytes" } });
    const tooBig = await post(form(png(200 * 1024)), ada);
    expect(tooBig).toMatchObject({ status: 413, body: { code: "PAYLOAD_TOO_LARGE" } });
    expect(await post(form(new Blob(["<p>"], { type: "text/html" })), ada)).toMatchObject({ status: 415, body: { code: "UNSUPPORTED_MEDIA_TYPE" } });
    expect(await post(form(undefined, { note: "x" }), ada)).toMatchObject({ status: 400, body: { message: expect.stringMatching(/file: expected a file/) } });
    const misnamed = new FormData();
    misnamed.set("upload", png(), "a.png");
    expect(await post(misnamed, ada)).toMatchObject({ status: 400, body: { message: 'Send the file in the "file" field (got "upload")' } });
    expect(await post(JSON.stringify({ file: "x" }), ada, { "content-type": "application/json" })).toMatchObject({
      status: 415,
      body: { code: "UNSUPPORTED_MEDIA_TYPE", message: 'Send multipart/form-data with a "file" field (got "application/json")' },
    });
    expect(storage.keys().length).toBe(keys);
  });

  it("is in /openapi.json as a multipart/form-data operation", async () => {
    const document = await (await app.handle(new Request(`${ORIGIN}/openapi.json`))).json();
    const operation = document.paths["/file/upload"].post;
    expect(operation.operationId).toBe("file.upload");
    const body = operation.requestBody.content["multipart/form-data"];
    expect(body.schema.properties.file).toEqual({ type: "string", format: "binary" });
    expect(body.schema.properties.attach.type).toBe("object");
    expect(body.schema.required).toEqual(["file"]);
    expect(body.encoding).toEqual({ attach: { contentType: "application/json" } });
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(["200", "401", "413", "415"]));
    expect(Object.keys(document.paths).filter((path) => path.startsWith("/file/"))).toEqual(["/file/upload"]);
    const result = await validate(structuredClone(document));
    expect(result.valid, result.valid ? "" : compileErrors(result)).toBe(true);
  });
});

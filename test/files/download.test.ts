import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type TestDatabase } from "../support/databases.js";
import { ORIGIN, signUp, type SignedIn } from "../support/auth.js";
import { bytes, filesApp, upload, uploadForm } from "./fixture.js";

describe("GET /files/:id", () => {
  let database: TestDatabase;
  let app: Awaited<ReturnType<ReturnType<typeof filesApp>["start"]>>;
  let publicApp: Awaited<ReturnType<ReturnType<typeof filesApp>["start"]>>;
  let ada: SignedIn;
  let publicDb: TestDatabase;
  beforeAll(async () => {
    database = await openDatabase("sqlite");
    app = await filesApp(database).start();
    ada = await signUp(app, "ada@example.test");
    publicDb = await openDatabase("sqlite");
    publicApp = await filesApp(publicDb, { files: { permissions: { upload: "public", list: "public", get: "public", delete: "admin" }, path: "/media/:id/raw" } }).start();
  });
  afterAll(async () => {
    await app?.close();
    await publicApp?.close();
    await database?.close();
    await publicDb?.close();
  });

  const get = (path: string, headers: Record<string, string> = {}, target = app, method = "GET") =>
    target.handle(new Request(`${ORIGIN}${path}`, { method, headers: { cookie: ada.cookie, ...headers } }));
  const put = async (blob: Blob, name: string) => (await upload(app, uploadForm(blob, name), { cookie: ada.cookie })).body;

  it("sends the bytes with type, length, an RFC 6266 file name, an ETag, nosniff, the sandbox CSP and private caching", async () => {
    const file = await put(new Blob([bytes(2048)], { type: "image/PNG" }), "Reisebericht über Köln \"2024\".png");
    const response = await get(file.url);
    expect(response.status).toBe(200);
    expect(Object.fromEntries(response.headers)).toMatchObject({
      "content-type": "image/png",
      "content-length": "2048",
      "content-disposition": `inline; filename="Reisebericht _ber K_ln _2024_.png"; filename*=UTF-8''Reisebericht%20%C3%BCber%20K%C3%B6ln%20%222024%22.png`,
      "x-content-type-options": "nosniff",
      "content-security-policy": "default-src 'none'; sandbox",
      "cache-control": "private, no-cache",
      "accept-ranges": "bytes",
      etag: expect.stringMatching(/^"[A-Za-z0-9_-]{27}"$/),
    });
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(bytes(2048));
    expect((await get(`${file.url}?download`)).headers.get("content-disposition")).toMatch(/^attachment; /);
  });

  it("answers 304 to a matching If-None-Match without the body, and HEAD with headers only", async () => {
    const file = await put(new Blob([bytes(100)], { type: "text/plain" }), "a.txt");
    const etag = (await get(file.url)).headers.get("etag")!;
    const cached = await get(file.url, { "if-none-match": `W/"other", ${etag}` });
    expect(cached.status).toBe(304);
    expect(await cached.text()).toBe("");
    expect(cached.headers.get("etag")).toBe(etag);
    expect((await get(file.url, { "if-none-match": '"other"' })).status).toBe(200);
    const head = await get(file.url, {}, app, "HEAD");
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe("100");
    expect(await head.text()).toBe("");
  });

  it("serves one byte range with 206, suffix and open ranges included, and 416 when unsatisfiable", async () => {
    const file = await put(new Blob([bytes(1000)], { type: "audio/mpeg" }), "song.mp3");
    const part = await get(file.url, { range: "bytes=100-199" });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe("bytes 100-199/1000");
    expect(part.headers.get("content-length")).toBe("100");
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(bytes(1000).subarray(100, 200));
    const tail = await get(file.url, { range: "bytes=-10" });
    expect([tail.status, tail.headers.get("content-range")]).toEqual([206, "bytes 990-999/1000"]);
    const open = await get(file.url, { range: "bytes=995-" });
    expect(new Uint8Array(await open.arrayBuffer())).toEqual(bytes(1000).subarray(995));
    const past = await get(file.url, { range: "bytes=900-5000" });
    expect(past.headers.get("content-range")).toBe("bytes 900-999/1000");
    const unsatisfiable = await get(file.url, { range: "bytes=1000-" });
    expect(unsatisfiable.status).toBe(416);
    expect(unsatisfiable.headers.get("content-range")).toBe("bytes */1000");
    expect(await unsatisfiable.json()).toMatchObject({ code: "RANGE_NOT_SATISFIABLE", status: 416 });
    // Several ranges, a malformed header, or a stale If-Range: the whole file.
    for (const headers of [{ range: "bytes=0-1,5-6" }, { range: "items=0-1" }, { range: "bytes=0-1", "if-range": '"stale"' }] as Record<string, string>[]) {
      const whole = await get(file.url, headers);
      expect([whole.status, whole.headers.get("content-length")]).toEqual([200, "1000"]);
    }
  });

  it("sends HTML, SVG and XML as attachments whatever is asked, and never trusts a malformed type", async () => {
    for (const [type, name] of [
      ["text/html", "page.html"],
      ["image/svg+xml", "logo.svg"],
      ["application/xhtml+xml", "x.xhtml"],
      ["text/xml", "feed.xml"],
      ["application/atom+xml", "atom.xml"],
    ]) {
      const file = await put(new Blob(["<script>alert(1)</script>"], { type }), name);
      const response = await get(file.url);
      expect(response.headers.get("content-disposition"), type).toMatch(/^attachment; /);
      expect(response.headers.get("content-type")).toBe(type);
    }
    const odd = await put(new Blob(["x"], { type: "text/html\r\nx-evil: 1" }), "odd");
    expect(odd.type).toBe("application/octet-stream");
    const withCharset = await put(new Blob(["x"], { type: "Text/Plain;charset=UTF-8" }), "note.txt");
    expect(withCharset.type).toBe("text/plain;charset=utf-8");
  });

  it("keeps names as metadata only: separators, dot segments, NUL and control characters are harmless", async () => {
    for (const [name, stored] of [
      ["../../etc/passwd", "passwd"],
      ["C:\\Users\\ada\\photo.jpg", "photo.jpg"],
      ["..", "file"],
      ["a\u0000b\u0007c\r\n.txt", "abc.txt"],
      ["\u0001\u0002", "file"],
    ]) {
      const file = await put(new Blob(["x"], { type: "text/plain" }), name);
      expect(file.name, JSON.stringify(name)).toBe(stored);
      const response = await get(file.url);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-disposition")).toContain(`filename*=UTF-8''${encodeURIComponent(stored)}`);
    }
  });

  it("serves public files to anyone with shared caching, on a configured path", async () => {
    const sent = await upload(publicApp, uploadForm(new Blob([bytes(10)], { type: "image/jpeg" }), "p.jpg"));
    expect(sent.body.url).toBe(`/media/${sent.body.id}/raw`);
    const response = await publicApp.handle(new Request(`${ORIGIN}${sent.body.url}`));
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("public, max-age=3600");
    expect((await publicApp.handle(new Request(`${ORIGIN}/files/${sent.body.id}`))).status).toBe(404);
    expect((await publicApp.handle(new Request(`${ORIGIN}/media/%00/raw`))).status).toBe(404);
  });
});

/**
 * Downloads render inline only by allowlist: raster images, audio, video and `text/plain`. Any other
 * type a browser might interpret (XSLT, XML, HTML, SVG, PDF, scripts) or does not know is an
 * attachment, whatever `accept` admitted at upload.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type TestDatabase } from "../support/databases.js";
import { ORIGIN } from "../support/auth.js";
import { filesApp, upload, uploadForm } from "../files/fixture.js";

describe("inline downloads by allowlist", () => {
  let database: TestDatabase;
  let app: Awaited<ReturnType<ReturnType<typeof filesApp>["start"]>>;
  beforeAll(async () => {
    database = await openDatabase("sqlite");
    const everyone = { upload: "public", list: "public", get: "public", delete: "public" } as const;
    app = await filesApp(database, { files: { permissions: everyone, accept: ["text/*", "image/*", "audio/*", "video/*", "application/*", "font/*", "x-unknown/*"] } }).start();
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  const disposition = async (type: string) => {
    const sent = await upload(app, uploadForm(new Blob(["<x/>"], { type }), "f"));
    expect(sent.status, type).toBe(200);
    const response = await app.handle(new Request(`${ORIGIN}${sent.body.url}`));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe(sent.body.type);
    return response.headers.get("content-disposition")!.split(";")[0];
  };

  it("serves raster images, audio, video and text/plain inline", async () => {
    for (const type of ["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "IMAGE/PNG", "audio/mpeg", "audio/ogg", "video/mp4", "video/webm", "text/plain", "text/plain;charset=utf-8"]) {
      expect(await disposition(type), type).toBe("inline");
    }
  });

  it("sends every other type as an attachment, text/xsl and unknown types included", async () => {
    for (const type of [
      "text/xsl",
      "text/xml",
      "application/xml",
      "application/xslt+xml",
      "text/html",
      "application/xhtml+xml",
      "image/svg+xml",
      "text/css",
      "text/javascript",
      "application/javascript",
      "application/json",
      "application/pdf",
      "text/markdown",
      "text/vtt",
      "image/bmp",
      "image/x-icon",
      "font/woff2",
      "x-unknown/thing",
      "application/octet-stream",
    ]) {
      expect(await disposition(type), type).toBe("attachment");
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { App } from "trellis";
import { schema } from "trellis/schema";
import { memorySecrets } from "trellis/secrets";
import { memoryStorage } from "trellis/storage";
import { errorOf, sqliteMemory } from "../support/app.js";
import type { FilesConfig } from "../../plugins/files/index.js";
import { testApp, type Actor, type TestApp, type TestAppInput } from "trellis/testing";
import { animatedGif, bombJpeg, bombPng, describe as read, jpegWithGps, pngWithAlpha, SVG_WITH_SCRIPT } from "./images.fixture.js";

const v1 = schema("1").auth().files({ placeholder: true }).build();
const ORIGIN = "http://localhost:3000";
const KEY = "current-signing-key-0123456789-abcdefghij";
const NEW_KEY = "a-brand-new-signing-key-0123456789-abcdefg";

/** What the storage holds, so a test can see variants appear and count reads. */
const storage = memoryStorage();
const stored = new Set<string>();
/** Every write, so a test can tell one transform stored from two storing the same key. */
let writes = 0;
/** Each file's list of its stored variants, rewritten as they are added: not counted as a variant. */
const isVariantList = (key: string) => key.endsWith("/variants/list");
const tracked = {
  get: (key: string) => storage.get(key),
  async set(key: string, bytes: Uint8Array) {
    if (!isVariantList(key)) {
      writes++;
      stored.add(key);
    }
    await storage.set(key, bytes);
  },
  async delete(key: string) {
    stored.delete(key);
    await storage.delete(key);
  },
};

function createApp({ db, secret }: TestAppInput, keys: Record<string, string> = { FILES_SIGNING_KEY: KEY }) {
  return new App({ baseUrl: ORIGIN, db, storage: tracked, secrets: memorySecrets(keys) })
    .schema(v1)
    .auth({ secret, emailAndPassword: { enabled: true } })
    .files({
      images: {
        variants: { thumb: { width: 200, height: 200, fit: "cover" }, card: { width: 300, quality: 60 } },
        maxInputPixels: 40_000_000,
        maxFrames: 2,
        concurrency: 1,
        queue: 1,
      },
    });
}

describe("image variants and signed URLs", () => {
  let t: TestApp<typeof createApp>;
  let ada: Actor<any>;
  let bob: Actor<any>;
  const files: Record<string, any> = {};
  beforeAll(async () => {
    t = await testApp(createApp);
    [ada, bob] = await Promise.all([t.signUp(), t.signUp()]);
    const put = (bytes: Uint8Array | string, name: string, type: string) => ada.client.file.upload({ file: new File([bytes as BlobPart], name, { type }) });
    const [jpeg, png, gif] = await Promise.all([jpegWithGps(), pngWithAlpha(), animatedGif(3)]);
    files.jpeg = await put(jpeg, "holiday.jpg", "image/jpeg");
    files.png = await put(png, "logo.png", "image/png");
    files.gif = await put(gif, "spinner.gif", "image/gif");
    files.bomb = await put(bombPng(), "bomb.png", "image/png");
    files.bombJpeg = await put(await bombJpeg(), "bomb.jpg", "image/jpeg");
    files.svg = await put(SVG_WITH_SCRIPT, "drawing.svg", "image/svg+xml");
    files.text = await put("plain words", "notes.txt", "text/plain");
    // A real JPEG header over pixels cut short.
    files.truncated = await put(jpeg.subarray(0, 400), "cut.jpg", "image/jpeg");
  }, 60_000);
  afterAll(() => t?.close());

  const get = (path: string, headers: Record<string, string> = {}, who: { fetch: Actor<any>["fetch"] } = ada) => who.fetch(path, { headers });
  const anonymous = (path: string, headers: Record<string, string> = {}) => t.app.handle(new Request(new URL(path, ORIGIN), { headers }));

  it("records carry a thumbhash placeholder and the variant URLs, images only", () => {
    expect(files.jpeg).toMatchObject({ placeholder: expect.stringMatching(/^[A-Za-z0-9+/]{20,40}={0,2}$/), variants: { thumb: `/files/${files.jpeg.id}?variant=thumb`, card: `/files/${files.jpeg.id}?variant=card` } });
    expect(files.png.placeholder).toEqual(expect.any(String));
    // Too large to decode for a placeholder, and an SVG that is never rasterised: none, the upload still stored.
    expect(files.bomb.placeholder).toBeNull();
    expect(files.svg).toMatchObject({ placeholder: null });
    expect(files.svg.variants).toBeUndefined();
    expect(files.text).toMatchObject({ placeholder: null });
    expect(files.text.variants).toBeUndefined();
  });

  it("makes a variant on first request, oriented, without EXIF, by Accept, then serves it from the store", async () => {
    const jpegAccept = { accept: "image/jpeg,*/*;q=0.8" };
    expect(await read(await (await get(files.jpeg.url)).arrayBuffer())).toMatchObject({ width: 600, height: 400, exif: true });
    const before = stored.size;
    const first = await get(`${files.jpeg.url}?variant=card`, jpegAccept);
    expect(first.status).toBe(200);
    expect(Object.fromEntries(first.headers)).toMatchObject({ "content-type": "image/jpeg", vary: "Accept", "cache-control": "private, no-cache", "accept-ranges": "bytes", "content-disposition": expect.stringMatching(/^inline; filename="holiday.jpg"/) });
    const body = await first.arrayBuffer();
    // Orientation 6 applied (600 x 400 stored, drawn upright as 400 x 600), width 300 keeps the ratio, EXIF (GPS with it) gone.
    expect(await read(body)).toMatchObject({ format: "jpeg", width: 300, height: 450, exif: false });
    expect(stored.size).toBe(before + 1);
    const again = await get(`${files.jpeg.url}?variant=card`, jpegAccept);
    expect(new Uint8Array(await again.arrayBuffer())).toEqual(new Uint8Array(body));
    expect(stored.size).toBe(before + 1);

    const webp = await get(`${files.jpeg.url}?variant=thumb`, { accept: "image/webp,image/*,*/*;q=0.8" });
    expect(webp.headers.get("content-type")).toBe("image/webp");
    expect(await read(await webp.arrayBuffer())).toMatchObject({ format: "webp", width: 200, height: 200, exif: false });
    const avif = await get(`${files.jpeg.url}?variant=thumb`, { accept: "image/avif,image/webp,*/*" });
    expect(avif.headers.get("content-type")).toBe("image/avif");
    expect((await read(await avif.arrayBuffer())).format).toBe("heif");
    // A zero quality refuses a format.
    expect((await get(`${files.jpeg.url}?variant=thumb`, { accept: "image/avif;q=0,image/webp" })).headers.get("content-type")).toBe("image/webp");
    expect(stored.size).toBe(before + 3);
  });

  it("makes a variant asked for twice at once only once, and answers HEAD without a body", async () => {
    const [before, writesBefore] = [stored.size, writes];
    const [one, two] = await Promise.all([get(`${files.gif.url}?variant=thumb`), get(`${files.gif.url}?variant=thumb`)]);
    expect(writes).toBe(writesBefore + 1);
    const body = new Uint8Array(await one.arrayBuffer());
    expect(new Uint8Array(await two.arrayBuffer())).toEqual(body);
    expect(stored.size).toBe(before + 1);
    const head = await ada.fetch(`${files.gif.url}?variant=thumb`, { method: "HEAD" });
    expect([head.status, head.headers.get("content-type"), await head.text()]).toEqual([200, "image/gif", ""]);
    expect(Number(head.headers.get("content-length"))).toBe(body.byteLength);
  });

  it("keeps transparency in PNG, animation in GIF (frames capped), and answers ETag and Range as originals do", async () => {
    const png = await get(`${files.png.url}?variant=thumb`);
    expect(png.headers.get("content-type")).toBe("image/png");
    expect(await read(await png.arrayBuffer())).toMatchObject({ format: "png", hasAlpha: true, width: 200, height: 200 });
    const gif = await get(`${files.gif.url}?variant=card`, { accept: "image/webp" });
    expect(gif.headers.get("content-type")).toBe("image/webp");
    expect(await read(await gif.arrayBuffer())).toMatchObject({ format: "webp", pages: 2 });
    const stillGif = await get(`${files.gif.url}?variant=card`);
    expect(await read(await stillGif.arrayBuffer())).toMatchObject({ format: "gif", pages: 2 });

    const full = await get(`${files.png.url}?variant=thumb`);
    const etag = full.headers.get("etag")!;
    const whole = new Uint8Array(await full.arrayBuffer());
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(etag).not.toBe((await get(files.png.url)).headers.get("etag"));
    expect((await get(`${files.png.url}?variant=thumb`, { "if-none-match": etag })).status).toBe(304);
    const part = await get(`${files.png.url}?variant=thumb`, { range: "bytes=0-9" });
    expect([part.status, part.headers.get("content-range"), part.headers.get("content-length")]).toEqual([206, `bytes 0-9/${whole.length}`, "10"]);
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(whole.subarray(0, 10));
    expect((await get(`${files.png.url}?variant=thumb`, { range: `bytes=${whole.length}-` })).status).toBe(416);
  });

  it("refuses what it must not decode: a bomb header with 422, SVG and non-images with 415, an unknown variant with 400", async () => {
    const bomb = await get(`${files.bomb.url}?variant=thumb`);
    expect(bomb.status).toBe(422);
    expect(await bomb.json()).toMatchObject({ code: "FILES_IMAGE_TOO_LARGE", message: "The image is 50000 x 50000, more than the 40000000 pixels images are allowed" });
    // A JPEG's header is read by the transform itself: the same refusal, in every format.
    for (const accept of ["image/jpeg", "image/webp"]) {
      const jpegBomb = await get(`${files.bombJpeg.url}?variant=card`, { accept });
      expect([jpegBomb.status, await jpegBomb.json()]).toMatchObject([422, { code: "FILES_IMAGE_TOO_LARGE", message: "The image is 50000 x 50000, more than the 40000000 pixels images are allowed" }]);
    }
    const svg = await get(`${files.svg.url}?variant=thumb`);
    expect(svg.status).toBe(415);
    expect(await svg.json()).toMatchObject({ code: "FILES_SVG_REFUSED" });
    // The original SVG is still an attachment, never rendered in place.
    expect((await get(files.svg.url)).headers.get("content-disposition")).toMatch(/^attachment;/);
    const truncated = await get(`${files.truncated.url}?variant=thumb`);
    expect([truncated.status, (await truncated.json()).code]).toEqual([422, "FILES_IMAGE_UNREADABLE"]);
    const text = await get(`${files.text.url}?variant=thumb`);
    expect([text.status, (await text.json()).code]).toEqual([415, "FILES_NOT_AN_IMAGE"]);
    const unknown = await get(`${files.jpeg.url}?variant=huge`);
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ code: "FILES_UNKNOWN_VARIANT", message: 'Unknown variant "huge"; the variants are thumb, card' });
    // Variants follow the file's rules: someone else's file is 404, as for the original.
    expect((await get(`${files.jpeg.url}?variant=thumb`, {}, bob)).status).toBe(404);
  });

  it("refuses an ad-hoc size without a signature, and serves it with one", async () => {
    const unsigned = await get(`${files.jpeg.url}?w=120&h=80&fit=cover`);
    expect(unsigned.status).toBe(403);
    expect(await unsigned.json()).toMatchObject({ code: "FILES_SIZE_NEEDS_SIGNATURE" });
    const { url } = await ada.client.file.sign({ id: files.jpeg.id, expiresIn: 60, variant: { width: 120, height: 80, fit: "cover" } });
    expect(url).toMatch(new RegExp(`^${ORIGIN}/files/${files.jpeg.id}\\?w=120&h=80&fit=cover&expires=\\d+&sig=[A-Za-z0-9_-]{43}$`));
    const signed = await anonymous(url, { accept: "image/jpeg" });
    expect(signed.status).toBe(200);
    expect(await read(await signed.arrayBuffer())).toMatchObject({ width: 120, height: 80, format: "jpeg" });
    expect((await anonymous(url.replace("w=120", "w=4000"))).status).toBe(403);
    expect((await ada.client.file.sign({ id: files.jpeg.id, expiresIn: 60, variant: { width: 99_999 } }).catch((error: any) => error)).status).toBe(400);
  });

  it("signs URLs that work without a session until they expire, bound to file, variant and disposition", async () => {
    const { url, expiresAt } = await ada.client.file.sign({ id: files.jpeg.id, expiresIn: 120, variant: "thumb" });
    expect(expiresAt.getTime()).toBeGreaterThan(Date.now() + 100_000);
    const ok = await anonymous(url);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("cache-control")).toMatch(/^public, max-age=1(19|20)$/);
    expect((await read(await ok.arrayBuffer())).width).toBe(200);
    // Tampered: another variant, another file, the disposition added, the signature changed.
    for (const changed of [url.replace("variant=thumb", "variant=card"), url.replace(files.jpeg.id, files.png.id), `${url}&download`, url.slice(0, -2) + (url.endsWith("AA") ? "BB" : "AA")]) {
      const response = await anonymous(changed);
      expect(response.status, changed).toBe(403);
      expect(await response.json()).toMatchObject({ code: "FILES_URL_INVALID" });
    }
    // Someone else's file is 404 to signing, as to file.get.
    expect((await bob.client.file.sign({ id: files.jpeg.id, expiresIn: 60 }).catch((error: any) => error)).status).toBe(404);
    // The original as an attachment, signed in server code.
    const service = t.app.sealed.service("files")!;
    const download = await anonymous(service.sign(files.text.id, { expiresIn: 60, download: true }));
    expect([download.status, await download.text()]).toEqual([200, "plain words"]);
    expect(download.headers.get("content-disposition")).toMatch(/^attachment;/);
    // Expired: a genuine URL whose time has passed answers 410.
    const past = new URL(service.sign(files.text.id, { expiresIn: 1 }));
    await new Promise((resolve) => setTimeout(resolve, 1_100 - (Date.now() % 1000)));
    const expired = await anonymous(past.href);
    expect(expired.status).toBe(410);
    expect(await expired.json()).toMatchObject({ code: "FILES_URL_EXPIRED" });
    expect(() => service.sign(files.text.id, { expiresIn: 8 * 24 * 3600 })).toThrow(/expiresIn must be a whole number of seconds from 1 to 604800/);
  });

  it("keeps URLs signed with the previous key working after a rotation, and refuses those of a key it does not hold", async () => {
    // Another app over the same store whose keys were rotated: the first app's key is now its previous one.
    const rotated = await testApp((input: TestAppInput) => createApp(input, { FILES_SIGNING_KEY: NEW_KEY, FILES_SIGNING_KEY_PREVIOUS: KEY }));
    try {
      const carol = await rotated.signUp();
      const file = await carol.client.file.upload({ file: new File(["rotated"], "r.txt", { type: "text/plain" }) });
      const byPrevious = t.app.sealed.service("files")!.sign(file.id, { expiresIn: 60 });
      const response = await rotated.app.handle(new Request(byPrevious));
      expect([response.status, await response.text()]).toEqual([200, "rotated"]);
      // The other way round: the first app never held the new key.
      const byNew = rotated.app.sealed.service("files")!.sign(files.text.id, { expiresIn: 60 });
      expect((await anonymous(byNew)).status).toBe(403);
      expect((await anonymous(t.app.sealed.service("files")!.sign(files.text.id, { expiresIn: 60 }))).status).toBe(200);
    } finally {
      await rotated.close();
    }
  });

  it("deletes cached variants with the file", async () => {
    await get(`${files.png.url}?variant=card`);
    const before = [...stored].filter((key) => key.includes("/variants/")).length;
    expect(before).toBeGreaterThan(0);
    await ada.client.file.delete({ id: files.png.id });
    const png = [...stored].filter((key) => key.includes("/variants/"));
    expect(png.length).toBeLessThan(before);
    expect((await get(`${files.png.url}?variant=card`)).status).toBe(404);
  });

  it("answers 503 with Retry-After beyond the transform queue", async () => {
    // Six different sizes (the same one asked twice at once is made once): one runs, one waits, four are refused.
    const urls = await Promise.all(Array.from({ length: 6 }, (_, i) => ada.client.file.sign({ id: files.jpeg.id, expiresIn: 60, variant: { width: 100 + i } })));
    const responses = await Promise.all(urls.map(({ url }) => anonymous(url)));
    expect(responses.map((response) => response.status).sort()).toEqual([200, 200, 503, 503, 503, 503]);
    const busy = responses.find((response) => response.status === 503)!;
    expect(busy.headers.get("retry-after")).toBe("1");
    expect(await busy.json()).toMatchObject({ code: "FILES_IMAGES_BUSY" });
  });
});

describe("placeholders added in a later schema version", () => {
  it("migrates file.placeholder in and fills it for images uploaded after", async () => {
    const plain = schema("1").auth().files().build();
    const withPlaceholder = schema("2").extend(plain).files({ placeholder: true }).build();
    const t = await testApp(({ db, secret, storage }: TestAppInput) =>
      new App({ db, storage }).schema(plain).schema(withPlaceholder).auth({ secret, emailAndPassword: { enabled: true } }).files({ images: {} }),
    );
    try {
      const user = await t.signUp();
      const record = await user.client.file.upload({ file: new File([(await pngWithAlpha()) as Uint8Array<ArrayBuffer>], "a.png", { type: "image/png" }) });
      expect(record.placeholder).toMatch(/^[A-Za-z0-9+/]+=*$/);
      expect(record.variants).toBeUndefined();
    } finally {
      await t.close();
    }
  });
});

describe("image options at build", () => {
  const build = (files: FilesConfig<any>, model: typeof v1 = v1, keys: Record<string, string> = {}) =>
    errorOf(() => new App({ db: sqliteMemory(), storage: memoryStorage(), secrets: memorySecrets(keys) }).schema(model).auth({ secret: "s".repeat(32) }).files(files).build());

  it("lists every bad variant, a placeholder without its column and a short signing key at once", () => {
    const error = build({ images: { variants: { "no/slash": { width: 10 }, empty: {}, wide: { width: 10_000, fit: "squash" as never, quality: 0 } }, placeholder: true } }, schema("1").auth().files().build() as never, { FILES_SIGNING_KEY: "short" });
    expect(error.code).toBe("FILES_BAD_OPTION");
    expect(error.message.split("; ")).toEqual([
      '.files() images.variants.no/slash: a variant name is 1 to 64 letters, digits, "_" or "-"',
      ".files() images.variants.empty needs a width, a height or both",
      ".files() images.variants.wide.width must be an integer from 1 to 4096 (got 10000)",
      '.files() images.variants.wide.fit must be one of cover, contain, fill, inside, outside (got "squash")',
      ".files() images.variants.wide.quality must be an integer from 1 to 100 (got 0)",
      '.files() images.placeholder needs the column file.placeholder: add .files({ placeholder: true }) to the latest schema (version "1")',
      "The files signing key (secret FILES_SIGNING_KEY) must be at least 32 characters",
    ]);
  });

  it("answers 501 to signing when no key is set, and refuses every signature", async () => {
    const app = new App({ db: sqliteMemory(), storage: memoryStorage() }).schema(v1).auth({ secret: "s".repeat(32) }).files({ permissions: { get: "public" } }).build();
    try {
      expect(() => app.sealed.service("files")!.sign("abc", { expiresIn: 60 })).toThrow(/Signed URLs are off: set the secret FILES_SIGNING_KEY/);
      const response = await app.handle(new Request(`${ORIGIN}/files/abc?expires=9999999999&sig=${"A".repeat(43)}`));
      expect([response.status, (await response.json()).code]).toEqual([403, "FILES_URL_INVALID"]);
      const half = await app.handle(new Request(`${ORIGIN}/files/abc?expires=9999999999`));
      expect([half.status, (await half.json()).message]).toEqual([400, "A signed URL has both expires and sig"]);
    } finally {
      await app.close();
    }
  });
});

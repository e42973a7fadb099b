import { deflateSync, crc32 } from "node:zlib";
import sharp from "sharp";

/** A JPEG with EXIF (GPS position, camera make) and orientation 6: stored 600 x 400, drawn 400 x 600. */
export async function jpegWithGps(): Promise<Uint8Array> {
  const buffer = await sharp({ create: { width: 600, height: 400, channels: 3, background: { r: 200, g: 40, b: 40 } } })
    .jpeg({ quality: 90 })
    .withMetadata({ orientation: 6 })
    .withExifMerge({ IFD0: { Make: "TrellisCam" }, IFD3: { GPSLatitudeRef: "N", GPSLatitude: "51/1 30/1 0/1", GPSLongitudeRef: "E", GPSLongitude: "0/1 7/1 0/1" } })
    .toBuffer();
  return new Uint8Array(buffer);
}

/** A half-transparent PNG, 400 x 300. */
export async function pngWithAlpha(): Promise<Uint8Array> {
  return new Uint8Array(await sharp({ create: { width: 400, height: 300, channels: 4, background: { r: 0, g: 120, b: 255, alpha: 0.5 } } }).png().toBuffer());
}

/** An animated GIF of `frames` frames, 64 x 64 each. */
export async function animatedGif(frames = 3): Promise<Uint8Array> {
  const colours = Array.from({ length: frames }, (_, i) => sharp({ create: { width: 64, height: 64, channels: 4, background: { r: (i * 80) % 256, g: 200, b: 50, alpha: 1 } } }).png().toBuffer());
  return new Uint8Array(await sharp(await Promise.all(colours), { join: { animated: true } }).gif({ delay: 100 }).toBuffer());
}

/** A PNG whose header declares `side` x `side` pixels over a few bytes of data: a decompression bomb. */
export function bombPng(side = 50_000): Uint8Array {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body) >>> 0);
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header[8] = 8; // bit depth
  header[9] = 0; // greyscale
  return new Uint8Array(Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk("IHDR", header), chunk("IDAT", deflateSync(Buffer.alloc(side + 1))), chunk("IEND", Buffer.alloc(0))]));
}

/** A small JPEG whose frame header is rewritten to declare `side` x `side` pixels: a bomb in the format read without a separate header pass. */
export async function bombJpeg(side = 50_000): Promise<Uint8Array> {
  const bytes = new Uint8Array(await sharp({ create: { width: 16, height: 16, channels: 3, background: "#808080" } }).jpeg().toBuffer());
  // The baseline frame header (FF C0): length, precision, then height and width.
  const frame = bytes.findIndex((byte, i) => byte === 0xff && bytes[i + 1] === 0xc0);
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  view.setUint16(frame + 5, side);
  view.setUint16(frame + 7, side);
  return bytes;
}

export const SVG_WITH_SCRIPT = `<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><script>alert(document.cookie)</script><rect width="100" height="100" fill="red"/></svg>`;

/** Format, size and whether EXIF is present, read back from bytes. */
export async function describe(bytes: ArrayBuffer | Uint8Array) {
  const meta = await sharp(new Uint8Array(bytes)).metadata();
  return { format: meta.format, width: meta.width, height: meta.height, pages: meta.pages ?? 1, exif: meta.exif !== undefined, hasAlpha: meta.hasAlpha };
}

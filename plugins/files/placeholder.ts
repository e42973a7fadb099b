import { rgbaToThumbHash } from "thumbhash";
import type { AppStorage } from "../../kernel/index.js";
import type { ResolvedImages } from "./image-options.js";
import { inspect, isTransformable, loadSharp } from "./transform.js";
import type { WorkLimit } from "./work-limit.js";

/**
 * A thumbhash of an uploaded image (about 25 bytes, base64): enough for a client to draw a blurred
 * preview before the image arrives. Best effort: an image too large, unreadable, or uploaded while
 * every transform slot is busy gets none, and the upload goes on.
 */
export async function placeholderOf(storage: AppStorage, key: string, type: string, images: ResolvedImages, limit: WorkLimit): Promise<string | null> {
  if (!isTransformable(type, images)) return null;
  const work = limit.tryRun(async () => {
    const bytes = await storage.get(key);
    if (!bytes) return null;
    const sharp = await loadSharp();
    await inspect(sharp, bytes, images);
    // thumbhash takes at most 100 x 100 pixels.
    const { data, info } = await sharp(bytes, { limitInputPixels: images.maxInputPixels })
      .autoOrient()
      .resize({ width: 100, height: 100, fit: "inside" })
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    return Buffer.from(rgbaToThumbHash(info.width, info.height, data)).toString("base64");
  });
  return work ? work.catch(() => null) : null;
}

import { createHmac, timingSafeEqual } from "node:crypto";
import type { AppSecrets } from "../../kernel/index.js";

export interface SigningConfig {
  /**
   * The secret (read through the app's `secrets`) that signs new URLs: at least 32 characters.
   * Without it, `file.sign` and `context.files.sign` answer 501 and every signed URL is refused.
   * @default "FILES_SIGNING_KEY"
   */
  secret?: string;
  /**
   * The secret holding the key used before the current one. URLs it signed keep working until they
   * expire: rotate by moving the current key here and setting a new current one.
   * @default "FILES_SIGNING_KEY_PREVIOUS"
   */
  previousSecret?: string;
  /**
   * The longest `expiresIn` a caller may ask for, in seconds.
   * @default 604800 (7 days)
   */
  maxExpiresIn?: number;
}

/** What a signed URL is bound to: the file, the transform (a variant name or an ad-hoc size) and the disposition. */
export interface SignedTarget {
  id: string;
  /** `variant:<name>`, `size:<w>x<h>:<fit>`, or `""` for the original. */
  transform: string;
  download: boolean;
  /** Unix seconds. */
  expires: number;
}

export type Verdict = "valid" | "invalid" | "expired";

export const MIN_KEY_LENGTH = 32;
export const DEFAULT_MAX_EXPIRES_IN = 7 * 24 * 3600;

/**
 * HMAC-SHA256 signatures over a signed URL's target, with the current key and, for verification
 * only, the previous one. The keys are read once, at build, from the app's secrets.
 */
export class UrlSigner {
  readonly #current: Buffer | undefined;
  readonly #accepted: Buffer[];

  constructor(current: string | undefined, previous: string | undefined) {
    this.#current = current ? Buffer.from(current) : undefined;
    this.#accepted = [current, previous].filter((key): key is string => !!key).map((key) => Buffer.from(key));
  }

  static fromSecrets(secrets: AppSecrets | undefined, config: SigningConfig = {}): UrlSigner {
    const read = (name: string) => {
      const value = secrets?.get(name);
      return typeof value === "string" && value !== "" ? value : undefined;
    };
    return new UrlSigner(read(config.secret ?? "FILES_SIGNING_KEY"), read(config.previousSecret ?? "FILES_SIGNING_KEY_PREVIOUS"));
  }

  get enabled(): boolean {
    return this.#current !== undefined;
  }

  sign(target: SignedTarget): string {
    if (!this.#current) throw new Error("No signing key");
    return mac(this.#current, target);
  }

  /**
   * The signature is checked first, against every accepted key in constant time, so an expired URL
   * is told apart only once it is known to be genuine.
   */
  verify(target: SignedTarget, signature: string, now = Date.now()): Verdict {
    const given = Buffer.from(signature, "base64url");
    // A signature that does not survive the round trip was not one of ours (base64url is lenient).
    if (given.length !== 32 || given.toString("base64url") !== signature) return "invalid";
    let genuine = false;
    for (const key of this.#accepted) genuine = timingSafeEqual(Buffer.from(mac(key, target), "base64url"), given) || genuine;
    if (!genuine) return "invalid";
    return target.expires * 1000 <= now ? "expired" : "valid";
  }
}

function mac(key: Buffer, { id, transform, download, expires }: SignedTarget): string {
  // A fixed label and a newline between fields: no field can run into the next.
  const message = ["trellis-file-url-v1", id, transform, download ? "attachment" : "inline", String(expires)].join("\n");
  return createHmac("sha256", key).update(message).digest("base64url");
}

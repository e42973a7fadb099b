import { TrellisError } from "./errors.js";

/**
 * Named services plugins share: the auth instance, the resource registry, the app's storage. The
 * kernel wires them without knowing any of them: a service provided with `{ context: true }` is
 * also set on every request context under its key.
 *
 * Types come from declaration merging, so a plugin types what it provides where it provides it:
 *
 * ```ts
 * declare module "trellis/kernel" {
 *   interface AppServices { mailer: Mailer }
 * }
 * ```
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface AppServices {}

export interface ProvideOptions {
  /**
   * Also set the value on every request context as `context[key]`.
   * @default false
   */
  context?: boolean;
}

/** The type of a service key: merged entries are typed, any other key is `unknown`. */
export type ServiceOf<K extends string> = K extends keyof AppServices ? AppServices[K] : unknown;

export class ServiceRegistry {
  readonly #values = new Map<string, { value: unknown; owner: string }>();
  readonly #contextKeys: string[] = [];
  #contextEntries: readonly (readonly [string, unknown])[] | undefined;

  provide(owner: string, key: string, value: unknown, options: ProvideOptions = {}): void {
    const existing = this.#values.get(key);
    if (existing && existing.owner !== owner) {
      throw new TrellisError("KERNEL_SERVICE_TAKEN", `"${owner}" provides "${key}", which "${existing.owner}" already provides`, { plugin: owner });
    }
    this.#values.set(key, { value, owner });
    if (options.context && !this.#contextKeys.includes(key)) this.#contextKeys.push(key);
    this.#contextEntries = undefined;
  }

  has(key: string): boolean {
    return this.#values.has(key);
  }

  get(key: string): unknown {
    return this.#values.get(key)?.value;
  }

  owner(key: string): string | undefined {
    return this.#values.get(key)?.owner;
  }

  keys(): string[] {
    return [...this.#values.keys()];
  }

  /** The services every request context carries, recomputed only after a `provide`. */
  contextEntries(): readonly (readonly [string, unknown])[] {
    return (this.#contextEntries ??= this.#contextKeys.filter((key) => this.#values.has(key)).map((key) => [key, this.#values.get(key)!.value] as const));
  }
}

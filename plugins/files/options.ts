import type { AppRpcContext, AppStorage } from "../../kernel/index.js";
import { resolveImages, type ImagesConfig, type ResolvedImages } from "./image-options.js";
import { DEFAULT_MAX_EXPIRES_IN, type SigningConfig } from "./signing.js";

export type FileAction = "upload" | "list" | "get" | "delete";
export const FILE_ACTIONS: readonly FileAction[] = ["upload", "list", "get", "delete"];

/** A function permission: `row` is the file record on get and delete (undefined when missing). */
export type FilePermissionFn<Ctx = AppRpcContext> = (args: { context: Ctx; row?: FileRecord }) => boolean | Promise<boolean>;

/**
 * The resources vocabulary. `owner` lets a caller reach only the files they uploaded (others get
 * 404, as for a missing id); a caller holding one of `roles` reaches every file.
 */
export type FilePermission<Ctx = AppRpcContext> = "public" | "authenticated" | "admin" | "owner" | FilePermissionFn<Ctx>;

export interface FilesConfig<Ctx = AppRpcContext> {
  /**
   * The store for file bytes, instead of the app's `storage`.
   * @default the App constructor's `storage`
   */
  storage?: AppStorage;
  /**
   * Largest file accepted, counted on the bytes as they arrive; larger uploads get 413, the rest
   * of the body unread. Files stream into the storage, never held whole in memory.
   * @default 10485760 (10 MiB)
   */
  maxBytes?: number;
  /**
   * Accepted media types, compared case-insensitively with parameters ignored; `image/*` and
   * `*\/*` are wildcards. Anything else gets 415.
   * @default every type
   */
  accept?: string[];
  /**
   * Who may do what.
   * @default { upload: "authenticated", list: "authenticated", get: "owner", delete: "owner" }
   */
  permissions?: Partial<Record<FileAction, FilePermission<Ctx>>>;
  /**
   * The download route; must contain `:id`.
   * @default "/files/:id"
   */
  path?: string;
  /**
   * Roles that reach every file whatever its owner (and that `admin` accepts).
   * @default ["admin"]
   */
  roles?: string[];
  /**
   * Image variants, served as `GET <path>?variant=<name>`, and their bounds. Needs the optional
   * package `sharp`.
   * @default none
   */
  images?: ImagesConfig;
  /**
   * Where the keys that sign download URLs come from (the app's `secrets`).
   * @default { secret: "FILES_SIGNING_KEY", previousSecret: "FILES_SIGNING_KEY_PREVIOUS", maxExpiresIn: 604800 }
   */
  signing?: SigningConfig;
}

/** What `file.*` return and the download URL serves: the storage key never leaves the server. */
export interface FileRecord {
  id: string;
  name: string;
  /** The media type, as stored. */
  type: string;
  /** Bytes. */
  size: number;
  /** The uploader; present when the schema's `.files()` has `owner` (the default). */
  userId?: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** The download URL's path, e.g. `/files/<id>`. */
  url: string;
  /** The organization it was uploaded in (null: none), when the schema has `.files({ organizations: true })`. */
  organizationId?: string | null;
  /** A thumbhash (base64) of an image, when the schema has `.files({ placeholder: true })`. */
  placeholder?: string | null;
  /** URLs of the image's variants by name, when `images.variants` is configured. */
  variants?: Record<string, string>;
  /** Only in `file.list` with `attachedTo`: the file's role and position on that row. */
  attachment?: { role: string | null; position: number };
}

export interface ResolvedFilesConfig {
  storage: AppStorage | undefined;
  maxBytes: number;
  accept: readonly string[] | undefined;
  permissions: Record<FileAction, FilePermission<any>>;
  path: string;
  roles: readonly string[];
  images: ResolvedImages | undefined;
  signing: SigningConfig & { maxExpiresIn: number };
}

export const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;

export function resolveConfig(config: FilesConfig<any>): ResolvedFilesConfig {
  return {
    storage: config.storage,
    maxBytes: config.maxBytes ?? DEFAULT_MAX_BYTES,
    accept: config.accept,
    permissions: { upload: "authenticated", list: "authenticated", get: "owner", delete: "owner", ...config.permissions },
    path: config.path ?? "/files/:id",
    roles: config.roles ?? ["admin"],
    images: config.images ? resolveImages(config.images) : undefined,
    signing: { ...config.signing, maxExpiresIn: config.signing?.maxExpiresIn ?? DEFAULT_MAX_EXPIRES_IN },
  };
}

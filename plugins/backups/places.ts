import { mkdir, readdir, readFile, rename, stat, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { AppStorage } from "../../kernel/index.js";

/** One backup as it is listed. */
export interface BackupInfo {
  /** `backup-<UTC time>.tar.gz` (embedded) or `.dump` (pg_dump). */
  name: string;
  /** Bytes. */
  size: number;
  createdAt: Date;
}

/** Where backups are kept: a directory, or the app's storage adapter. */
export interface BackupPlace {
  /** For the dashboard: the directory, or `storage (backups/)`. */
  readonly describe: string;
  write(backup: BackupInfo, bytes: Uint8Array): Promise<void>;
  /** Newest first. */
  list(): Promise<BackupInfo[]>;
  read(name: string): Promise<Uint8Array | null>;
  remove(name: string): Promise<void>;
}

/** Only names this plugin writes, so a listing or a retention pass never touches anything else. */
export const BACKUP_NAME = /^backup-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z\.(tar\.gz|dump)$/;

const newestFirst = (a: BackupInfo, b: BackupInfo) => b.createdAt.getTime() - a.createdAt.getTime() || b.name.localeCompare(a.name);

export function directoryPlace(dir: string): BackupPlace {
  return {
    describe: dir,
    async write({ name }, bytes) {
      await mkdir(dir, { recursive: true });
      // Written beside, then renamed: a listing never shows half a backup.
      const partial = join(dir, `.${name}.partial`);
      await writeFile(partial, bytes);
      await rename(partial, join(dir, name));
    },
    async list() {
      const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => (error.code === "ENOENT" ? [] : Promise.reject(error)));
      const found = await Promise.all(
        names.filter((name) => BACKUP_NAME.test(name)).map(async (name) => {
          const about = await stat(join(dir, name));
          return { name, size: about.size, createdAt: about.mtime };
        }),
      );
      return found.sort(newestFirst);
    },
    read: (name) => readFile(join(dir, name)).then((bytes) => new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), (error: NodeJS.ErrnoException) => (error.code === "ENOENT" ? null : Promise.reject(error))),
    remove: (name) => unlink(join(dir, name)).catch((error: NodeJS.ErrnoException) => (error.code === "ENOENT" ? undefined : Promise.reject(error))),
  };
}

/**
 * Under `backups/` in the app's storage adapter. The adapter contract has no listing, so the list
 * is kept beside the backups as `backups/index.json`, written after each backup's bytes.
 */
export function storagePlace(storage: AppStorage): BackupPlace {
  const INDEX = "backups/index.json";
  const index = async (): Promise<BackupInfo[]> => {
    const bytes = await storage.get(INDEX);
    if (!bytes) return [];
    const entries = JSON.parse(new TextDecoder().decode(bytes)) as Array<{ name: string; size: number; createdAt: string }>;
    return entries.map((entry) => ({ ...entry, createdAt: new Date(entry.createdAt) })).sort(newestFirst);
  };
  const save = (entries: BackupInfo[]) => storage.set(INDEX, new TextEncoder().encode(JSON.stringify(entries)));
  return {
    describe: "storage (backups/)",
    async write(backup, bytes) {
      await storage.set(`backups/${backup.name}`, bytes);
      const entries = (await index()).filter((entry) => entry.name !== backup.name);
      await save([backup, ...entries]);
    },
    list: index,
    read: (name) => storage.get(`backups/${name}`),
    async remove(name) {
      await storage.delete(`backups/${name}`);
      await save((await index()).filter((entry) => entry.name !== name));
    },
  };
}

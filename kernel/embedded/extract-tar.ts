import { mkdir } from "node:fs/promises";
import { normalize } from "node:path";
import { extract } from "tar";

/**
 * What one read of the archive takes: node-tar's default is 16 MB, which for the 40 MB cluster dump
 * meant three 16 MB buffers. glibc serves a block that large with its own mapping and, once it is
 * freed, raises its thresholds to match (up to 32 MB kept at the top of every thread's arena rather
 * than given back): a start on a new data directory then held about 80 MB more for the life of the
 * process than one on an existing directory. Reads under glibc's initial 128 KiB threshold leave
 * it as it is (docs/operations.md#memory).
 */
const READ_SIZE = 64 * 1024;

/**
 * Unpacks a tarball from disk (PGlite's `dumpDataDir("none")`) into a directory, streaming, with
 * the file named `last` written after every other one: a data directory is a cluster for
 * `isNewCluster` only once its `PG_VERSION` exists, so one cut short by a crash or a full disk is
 * unpacked again on the next start rather than opened. Entries outside the directory are refused
 * (node-tar's own rule), and any damage to the archive is an error, never a warning.
 */
export async function extractTar(file: string, dir: string, last = "PG_VERSION"): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const isLast = (path: string) => normalize(path.replace(/^\/+/, "")) === last;
  const pass = async (filter: (path: string) => boolean) => {
    // PGlite names entries from the root (`/PG_VERSION`): node-tar's note that it strips the `/` is
    // expected; any other warning (a truncated or foreign archive) fails the unpacking.
    let damage: string | undefined;
    await extract({ file, cwd: dir, preserveOwner: false, filter, maxReadSize: READ_SIZE, onwarn: (code, message) => code !== "TAR_ENTRY_INFO" && (damage ??= `${code}: ${String(message)}`) });
    if (damage) throw new Error(`${file} could not be unpacked (${damage})`);
  };
  await pass((path) => !isLast(path));
  await pass(isLast);
}

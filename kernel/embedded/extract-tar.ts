import { mkdir, open, rename, type FileHandle } from "node:fs/promises";
import { dirname, join, normalize, sep } from "node:path";

const BLOCK = 512;
/** Read and written through one buffer, so unpacking a 40 MB cluster allocates 1 MB, not 40. */
const CHUNK = 1 << 20;

/**
 * Unpacks a tarball from disk (PGlite's `dumpDataDir("none")`: ustar, regular files and
 * directories) into a directory, streaming, with the file named `last` written after every other
 * one: a data directory is a cluster for `isNewCluster` only once its `PG_VERSION` exists, so one
 * cut short by a crash or a full disk is unpacked again on the next start rather than opened.
 */
export async function extractTar(file: string, dir: string, last = "PG_VERSION"): Promise<void> {
  const tar = await open(file, "r");
  const buffer = Buffer.allocUnsafe(CHUNK);
  let position = 0;
  let deferred: string | undefined;
  try {
    for (;;) {
      const { bytesRead } = await tar.read(buffer, 0, BLOCK, position);
      position += BLOCK;
      const header = buffer.subarray(0, BLOCK);
      if (bytesRead < BLOCK || header.every((byte) => byte === 0)) break; // end of archive
      if (header.toString("latin1", 257, 262) !== "ustar") throw new Error(`${file} is not a ustar archive (at byte ${position - BLOCK})`);
      const name = field(header, 345, 155) ? `${field(header, 345, 155)}/${field(header, 0, 100)}` : field(header, 0, 100);
      const size = parseInt(field(header, 124, 12).trim() || "0", 8);
      const type = String.fromCharCode(header[156]!);
      const relative = inside(name);
      const target = join(dir, relative);
      if (type === "5") await mkdir(target, { recursive: true, mode: 0o700 });
      else if (type === "0" || type === "\0") {
        await mkdir(dirname(target), { recursive: true, mode: 0o700 });
        const written = relative === last ? (deferred = `${target}.partial`) : target;
        await copy(tar, position, size, written, buffer);
      }
      position += Math.ceil(size / BLOCK) * BLOCK;
    }
    if (deferred) await rename(deferred, deferred.slice(0, -".partial".length));
  } finally {
    await tar.close();
  }
}

async function copy(tar: FileHandle, from: number, size: number, path: string, buffer: Buffer): Promise<void> {
  const out = await open(path, "w", 0o600);
  try {
    for (let done = 0; done < size; ) {
      const { bytesRead } = await tar.read(buffer, 0, Math.min(CHUNK, size - done), from + done);
      if (bytesRead === 0) throw new Error(`the archive ends inside ${path}`);
      await out.write(buffer, 0, bytesRead);
      done += bytesRead;
    }
  } finally {
    await out.close();
  }
}

function field(header: Buffer, offset: number, length: number): string {
  const raw = header.toString("latin1", offset, offset + length);
  const end = raw.indexOf("\0");
  return end === -1 ? raw : raw.slice(0, end);
}

/** The entry's path relative to the directory (`/PG_VERSION` and `./PG_VERSION` alike); one outside it is refused. */
function inside(name: string): string {
  const relative = normalize(name.replace(/^\/+/, ""));
  if (relative === ".." || relative.startsWith(`..${sep}`)) throw new Error(`the archive's entry ${name} is outside its directory`);
  return relative;
}

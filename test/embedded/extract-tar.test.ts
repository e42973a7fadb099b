import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { extractTar } from "../../kernel/embedded/extract-tar.js";

// A new data directory is unpacked from a tarball (kernel/embedded/fresh-cluster.ts); these check the
// unpacking itself on archives made by the system's tar in the format PGlite writes (ustar).
const root = mkdtempSync(join(tmpdir(), "trellis-extract-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function archive(name: string): string {
  const source = join(root, `${name}-source`);
  mkdirSync(join(source, "base", "1"), { recursive: true });
  writeFileSync(join(source, "PG_VERSION"), "17\n");
  writeFileSync(join(source, "base", "1", "1259"), Buffer.alloc(3 << 20, 7)); // larger than one read
  writeFileSync(join(source, "postgresql.conf"), "shared_buffers = 16MB\n");
  const file = join(root, `${name}.tar`);
  execFileSync("tar", ["--format=ustar", "-cf", file, "-C", source, "."]);
  return file;
}

it("unpacks directories and files, byte for byte", async () => {
  const target = join(root, "whole");
  await extractTar(archive("whole"), target);
  expect(readFileSync(join(target, "PG_VERSION"), "utf8")).toBe("17\n");
  expect(readFileSync(join(target, "postgresql.conf"), "utf8")).toBe("shared_buffers = 16MB\n");
  expect(readFileSync(join(target, "base", "1", "1259")).equals(Buffer.alloc(3 << 20, 7))).toBe(true);
});

it("reads the archive in blocks below glibc's 128 KiB mmap threshold, so unpacking leaves the allocator's thresholds as they were", async () => {
  // A freed block at or above the threshold raises it (and the trim threshold, to twice as much) for
  // the whole process: the 16 MB reads node-tar makes by default kept about 80 MB more resident after
  // a start on a new data directory (docs/operations.md#memory).
  const file = archive("blocks");
  const allocUnsafe = Buffer.allocUnsafe;
  let largest = 0;
  Buffer.allocUnsafe = (size: number) => {
    largest = Math.max(largest, size);
    return allocUnsafe(size);
  };
  try {
    await extractTar(file, join(root, "blocks"));
  } finally {
    Buffer.allocUnsafe = allocUnsafe;
  }
  expect(readFileSync(join(root, "blocks", "base", "1", "1259")).equals(Buffer.alloc(3 << 20, 7))).toBe(true);
  expect(largest).toBeGreaterThan(0);
  expect(largest).toBeLessThan(128 * 1024);
});

it("leaves no PG_VERSION when the archive is cut short, so the directory is still a new cluster", async () => {
  const file = archive("cut");
  truncateSync(file, 2 << 20); // ends inside the 3 MB file
  const target = join(root, "cut");
  await expect(extractTar(file, target)).rejects.toThrow(/truncated/i);
  expect(existsSync(join(target, "PG_VERSION"))).toBe(false);
});

it("refuses a file that is not a tarball", async () => {
  const file = join(root, "not.tar");
  writeFileSync(file, Buffer.alloc(1024, 1));
  await expect(extractTar(file, join(root, "not"))).rejects.toThrow();
  expect(existsSync(join(root, "not", "PG_VERSION"))).toBe(false);
});

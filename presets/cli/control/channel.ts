import { readFileSync, unlinkSync, writeFileSync } from "node:fs";

/**
 * The control channel's address book: a running server that holds an embedded data directory
 * writes `<dataDir>.control` beside it (as the lock is: PGlite owns every file inside), mode 0600,
 * holding its pid, its loopback URL and a random token. Only the data directory's owner can read
 * the token, so only they can run commands through the server.
 */
export interface ControlRecord {
  pid: number;
  url: string;
  token: string;
  /** The server's working folder (the project it was started in), for the CLI's quick lookup. */
  cwd: string;
}

export const controlFile = (dataDir: string) => `${dataDir}.control`;

/** Writes the record readable by this user alone (a leftover file is replaced, not reused with its mode). */
export function writeControl(dataDir: string, record: ControlRecord): void {
  removeControl(dataDir);
  writeFileSync(controlFile(dataDir), JSON.stringify(record), { mode: 0o600, flag: "wx" });
}

/** Removes the record if this process wrote it. */
export function removeControl(dataDir: string, pid?: number): void {
  if (pid !== undefined && readControl(dataDir)?.pid !== pid) return;
  try {
    unlinkSync(controlFile(dataDir));
  } catch {
    // already gone
  }
}

/** The record, when one is there and readable. */
export function readControl(dataDir: string): ControlRecord | undefined {
  try {
    const record = JSON.parse(readFileSync(controlFile(dataDir), "utf8")) as ControlRecord;
    return Number.isInteger(record.pid) && typeof record.url === "string" && typeof record.token === "string" ? record : undefined;
  } catch {
    return undefined;
  }
}

/** The server that holds `dataDir` and answers commands: a record whose process is alive. */
export function runningServer(dataDir: string): ControlRecord | undefined {
  const record = readControl(dataDir);
  if (!record || record.pid === process.pid) return undefined;
  try {
    process.kill(record.pid, 0);
    return record;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM" ? record : undefined;
  }
}

/** What the CLI sends: the command's name and its arguments (plain JSON), and whether to colour. */
export interface ControlRequest {
  command: string;
  args: unknown;
  colour: boolean;
}

/**
 * What the server answers: the command's output and exit code (and a value for the CLI, from a
 * command that hands one back: `db shell`'s socket), or the CLI error it raised.
 */
export type ControlReply = { code: number; output: string; value?: unknown } | { error: { code: string; message: string; fix?: string; exitCode: number }; output: string };

import type { Logger } from "../../kernel/index.js";
import { backupName, backupTime, type BackupInfo, type BackupPlace } from "./places.js";
import type { BackupSource } from "./source.js";

/** The last failure, kept until a backup succeeds. */
export interface BackupFailure {
  at: Date;
  message: string;
}

/** The `backups` service: `context.backups` in procedures, `_admin.backups.*` in the dashboard. */
export interface BackupsService {
  /** Takes a backup now, writes it, then deletes the oldest beyond `keep`. One at a time per process. */
  take(): Promise<BackupInfo>;
  /** Kept backups, newest first. */
  list(): Promise<BackupInfo[]>;
  /** A kept backup's bytes, or null when there is none of that name (or it is not a backup's name). */
  read(name: string): Promise<Uint8Array | null>;
  /** The same as a stream, read as it is sent rather than held whole in memory. */
  open(name: string): Promise<ReadableStream<Uint8Array> | null>;
  status(): { running: boolean; lastFailure: BackupFailure | null; lastBackup: BackupInfo | null };
}

interface Deps {
  source: BackupSource;
  place: BackupPlace;
  keep: number;
  logger: Logger | undefined;
}

/** Thrown by `take()` while another backup runs in this process (`_admin.backups.take` answers 409). */
export class BackupRunning extends Error {
  constructor() {
    super("A backup is already running; wait for it to finish");
  }
}

export class Backups implements BackupsService {
  #running: Promise<BackupInfo> | undefined;
  #lastFailure: BackupFailure | null = null;
  #lastBackup: BackupInfo | null = null;

  constructor(private readonly deps: Deps) {}

  #closing = new AbortController();

  /** Takes a backup now; `signal` (a job's) stops it, as does the app closing. */
  take(signal?: AbortSignal): Promise<BackupInfo> {
    if (this.#running) return Promise.reject(new BackupRunning());
    const running = this.#take(signal ? AbortSignal.any([signal, this.#closing.signal]) : this.#closing.signal);
    this.#running = running;
    const done = () => void (this.#running = undefined);
    running.then(done, done);
    return running;
  }

  /** Stops a backup being taken (pg_dump is killed): the app is closing. */
  close(): void {
    this.#closing.abort();
  }

  async #take(signal: AbortSignal): Promise<BackupInfo> {
    const { source, place, keep, logger } = this.deps;
    const started = Date.now();
    try {
      const createdAt = new Date();
      const name = backupName(createdAt, source.extension);
      const size = await place.write(name, await source.take(signal));
      const info = { name, size, createdAt: backupTime(name)! };
      await this.#prune(keep);
      this.#lastBackup = info;
      this.#lastFailure = null;
      logger?.info({ backup: name, bytes: info.size, durationMs: Date.now() - started, to: place.describe }, `backup ${name} written (${info.size} bytes)`);
      return info;
    } catch (error) {
      this.#lastFailure = { at: new Date(), message: (error as Error)?.message ?? String(error) };
      logger?.error({ err: error, to: place.describe }, `backup failed: ${this.#lastFailure.message}`);
      throw error;
    }
  }

  async #prune(keep: number): Promise<void> {
    const kept = await this.deps.place.list();
    for (const old of kept.slice(keep)) await this.deps.place.remove(old.name);
  }

  list(): Promise<BackupInfo[]> {
    return this.deps.place.list();
  }

  async read(name: string): Promise<Uint8Array | null> {
    const stream = await this.open(name);
    return stream && new Uint8Array(await new Response(stream).arrayBuffer());
  }

  open(name: string): Promise<ReadableStream<Uint8Array> | null> {
    return this.deps.place.read(name);
  }

  status() {
    return { running: this.#running !== undefined, lastFailure: this.#lastFailure, lastBackup: this.#lastBackup };
  }
}

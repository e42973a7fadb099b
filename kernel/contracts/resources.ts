import type { Dialect } from "kysely";
import type { QueryLimits } from "../db/query-limits.js";

/** The two database families Trellis generates DDL, auth schema and error mapping for. */
export type DatabaseKind = "postgres" | "sqlite";

/** A live-query provider (`db.live`); the live plugin reads it. */
export interface LiveProvider {
  readonly kind: string;
  /**
   * Hears writes made by other processes: `onMessage` gets each NOTIFY payload on `channel`;
   * `onReconnect` runs after a dropped connection came back (refresh everything then).
   */
  listen?(channel: string, onMessage: (payload: string) => void, onReconnect: () => void): Promise<{ close(): Promise<void> }>;
  [key: string]: unknown;
}

/** What the start banner says about a database; the factories fill it in. */
export interface DatabaseAbout {
  /** `embedded PostgreSQL (PGlite)`, `PostgreSQL`, `SQLite`. */
  engine: string;
  /** An absolute directory or file, `memory://`, or a URL with its password hidden. */
  location: string;
}

/** The `db` constructor parameter. */
export interface DatabaseConfig {
  dialect: Dialect;
  /** Must match the dialect: it drives DDL, the auth adapter and database error mapping. */
  kind: DatabaseKind;
  live?: LiveProvider;
  /** Bounds on the work one `db.query` call (so one list request) may ask for; see docs/security.md. */
  limits?: QueryLimits;
  /** The engine and where the data lives, for the start banner (else read from `dialect.about`). */
  about?: DatabaseAbout;
  /** Releases what the dialect holds beyond Kysely's own `destroy()` (the embedded factory sets it). */
  close?: () => Promise<void>;
  /**
   * A liveness check that does not queue behind running statements, for a single-connection
   * database whose connection may be busy (the embedded database thread sets it); the health
   * probe uses it instead of `select 1`.
   */
  probe?: () => Promise<void>;
  /** A consistent copy of the whole database, taken while it serves (the embedded factory sets it: a gzip tarball). */
  backup?: () => Promise<Uint8Array>;
}

/** Object store for file bytes (the contract lives beside the adapters). */
export type { AppStorage } from "../storage/contract.js";

/** Read access to environment secrets. */
export interface AppSecrets<T extends Record<string, unknown> = Record<string, string | undefined>> {
  get<K extends keyof T & string>(key: K): T[K];
  /** The value, or a thrown error naming the key when it is unset or empty. */
  require<K extends keyof T & string>(key: K): NonNullable<T[K]>;
  readonly all: Readonly<T>;
}

type StorageValue = null | string | number | boolean | object;

/**
 * The key/value contract: the structural slice of unstorage's `Storage`, so `createStorage()` is
 * assignable as is. `ttl` is in seconds.
 */
export interface AppKV {
  hasItem(key: string, opts?: Record<string, unknown>): Promise<boolean>;
  getItem<T = StorageValue>(key: string, opts?: Record<string, unknown>): Promise<T | null>;
  setItem(key: string, value: any, opts?: { ttl?: number; [key: string]: unknown }): Promise<void>;
  removeItem(key: string, opts?: Record<string, unknown> | boolean): Promise<void>;
  getKeys(base?: string, opts?: Record<string, unknown>): Promise<string[]>;
  clear(base?: string, opts?: Record<string, unknown>): Promise<void>;
  getItemRaw?<T = any>(key: string, opts?: Record<string, unknown>): Promise<T | null>;
  setItemRaw?(key: string, value: any, opts?: { ttl?: number; [key: string]: unknown }): Promise<void>;
}

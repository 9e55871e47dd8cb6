/**
 * The country database of `geoip_db` (docs/analytics.md): a `.mmdb` file read whole at start-up,
 * and read again when it changes on disk, so a monthly update of the file needs no restart.
 *
 * Start-up refuses a file that is missing, unreadable, damaged or truncated (`GeoipError`, the
 * server's exit 2): a service told to record countries must not quietly record none. Later the
 * file is looked at at most once a minute (its size, modification time and inode: an update that
 * renames a new file into place changes the inode even within one second), and only a change is
 * read. A new file that does not open — half copied, damaged, gone — keeps the old database in
 * use, with a warning; the next change is tried again. A lookup never touches the disk: the
 * reader in use answers from memory, with its cache of addresses (mmdb.ts).
 *
 * Only a regular file of at most `MAX_DATABASE_BYTES` is read, at start-up (else `GeoipError`) and
 * at a reload (else a warning, the old database kept). The file is opened with `O_NONBLOCK` and its
 * kind and size are judged by `fstat` on that descriptor, not by a stat of the path: a FIFO opens
 * at once instead of waiting for a writer (which would hang start-up, or hold a thread of the pool
 * for good at a reload), `/dev/zero` is never read, and a file swapped in between a stat and the
 * open cannot slip past.
 */
import { open, stat } from 'node:fs/promises';
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { openMmdb, type MmdbReader } from './mmdb.ts';
import type { CountrySource } from './recorder.ts';

/** How often the file is looked at, at most. */
export const CHECK_INTERVAL_MS = 60_000;

/**
 * The largest database read. The real ones are far smaller (a country database ~10 MB, the city
 * ones ~70–130 MB); the bound keeps a wrong path (a log file, a disk image) from filling memory.
 */
export const MAX_DATABASE_BYTES = 256 * 1024 * 1024;

const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

/** The database could not be opened at start-up; the message says why (not the file's contents). */
export class GeoipError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GeoipError';
  }
}

/** What tells a file's version apart. */
interface Version {
  readonly size: number;
  readonly mtimeMs: number;
  readonly ino: number;
}

interface GeoipFiles {
  read(path: string): Promise<Uint8Array>;
  version(path: string): Promise<Version>;
}

/** Why a file of this kind and size is not read, or undefined when it may be. */
function refusal(s: Stats): string | undefined {
  if (!s.isFile()) return `not a regular file (${kindOf(s)})`;
  if (s.size > MAX_DATABASE_BYTES) return `${s.size} bytes, more than the ${MAX_DATABASE_BYTES / 1024 / 1024} MiB a database may have`;
  return undefined;
}

function kindOf(s: Stats): string {
  if (s.isFIFO()) return 'a FIFO';
  if (s.isCharacterDevice()) return 'a character device';
  if (s.isBlockDevice()) return 'a block device';
  if (s.isDirectory()) return 'a directory';
  if (s.isSocket()) return 'a socket';
  return 'not a file';
}

/** Reads a regular file of at most `MAX_DATABASE_BYTES` whole; its version is that of the file read. */
function readDatabaseSync(path: string): { bytes: Uint8Array; version: Version } {
  const fd = openSync(path, OPEN_FLAGS);
  try {
    const s = fstatSync(fd);
    const refused = refusal(s);
    if (refused !== undefined) throw new Error(refused);
    const bytes = new Uint8Array(s.size);
    let at = 0;
    // A file that shrinks while it is read ends early and then fails to open as a database.
    while (at < bytes.length) {
      const n = readSync(fd, bytes, at, bytes.length - at, at);
      if (n === 0) break;
      at += n;
    }
    return { bytes: bytes.subarray(0, at), version: { size: s.size, mtimeMs: s.mtimeMs, ino: s.ino } };
  } finally {
    closeSync(fd);
  }
}

/** `readDatabaseSync` without blocking the event loop. */
async function readDatabase(path: string): Promise<Uint8Array> {
  const handle = await open(path, OPEN_FLAGS);
  try {
    const s = await handle.stat();
    const refused = refusal(s);
    if (refused !== undefined) throw new Error(refused);
    const bytes = new Uint8Array(s.size);
    let at = 0;
    while (at < bytes.length) {
      const { bytesRead } = await handle.read(bytes, at, bytes.length - at, at);
      if (bytesRead === 0) break;
      at += bytesRead;
    }
    return bytes.subarray(0, at);
  } finally {
    await handle.close();
  }
}

const DISK: GeoipFiles = {
  read: readDatabase,
  version: async (path) => {
    const s = await stat(path);
    return { size: s.size, mtimeMs: s.mtimeMs, ino: s.ino };
  },
};

export interface GeoipOptions {
  path: string;
  /** Told of a new file that was kept out, and of a new file taken. */
  warn: (message: string, fields: Record<string, unknown>) => void;
  info?: (message: string, fields: Record<string, unknown>) => void;
  /** Clock, milliseconds (tests fake it). */
  now?: () => number;
  /**
   * Calls `check` every `ms` (default: an unref'd `setInterval`, so it never keeps the process
   * alive); returns the function that stops it. Tests pass one that never fires and call `check`.
   */
  every?: (ms: number, check: () => void) => () => void;
  /** The file operations after start-up (tests replace them). */
  files?: GeoipFiles;
}

export interface Geoip extends CountrySource {
  /** The reader in use. */
  readonly reader: MmdbReader;
  /**
   * Looks at the file unless it was looked at less than a minute ago by the clock, and takes a
   * changed one that opens. Resolves with what happened; never rejects.
   */
  check(): Promise<'skipped' | 'unchanged' | 'reloaded' | 'kept'>;
  /** Stops the checks. Idempotent. */
  close(): void;
}

const same = (a: Version, b: Version): boolean => a.size === b.size && a.mtimeMs === b.mtimeMs && a.ino === b.ino;

function defaultEvery(ms: number, check: () => void): () => void {
  const timer = setInterval(check, ms);
  timer.unref();
  return () => clearInterval(timer);
}

const why = (err: unknown): string => (err as NodeJS.ErrnoException).code ?? (err instanceof Error ? err.message : String(err));

/** Opens `path` now (throws `GeoipError`), and keeps it current (above). */
export function openGeoip(options: GeoipOptions): Geoip {
  const { path, warn } = options;
  const now = options.now ?? Date.now;
  const files = options.files ?? DISK;
  let version: Version;
  let reader: MmdbReader;
  try {
    // The version is the opened file's: a change while it is read is seen as one at the next check.
    const read = readDatabaseSync(path);
    version = read.version;
    reader = openMmdb(read.bytes);
  } catch (err) {
    throw new GeoipError(`cannot read the country database ${JSON.stringify(path)}: ${why(err)}`);
  }
  let lastCheck = now();
  let checking: Promise<'unchanged' | 'reloaded' | 'kept'> | undefined;

  async function look(): Promise<'unchanged' | 'reloaded' | 'kept'> {
    let seen: Version;
    try {
      seen = await files.version(path);
    } catch (err) {
      // Gone, or being replaced: the old data stays, and so does the old version (a file put
      // back unchanged needs no reading).
      warn('the country database cannot be read; the one loaded stays in use', { file: path, error: why(err) });
      return 'kept';
    }
    if (same(seen, version)) return 'unchanged';
    try {
      const next = openMmdb(await files.read(path));
      reader = next;
      version = seen;
      options.info?.('country database reloaded', { file: path, type: next.metadata.databaseType, build_epoch: next.metadata.buildEpoch });
      return 'reloaded';
    } catch (err) {
      // Kept as seen, so a half-copied file is warned of once; its next change is tried again.
      version = seen;
      warn('the country database changed but does not open; the one loaded stays in use', { file: path, error: why(err) });
      return 'kept';
    }
  }

  function check(): Promise<'skipped' | 'unchanged' | 'reloaded' | 'kept'> {
    if (checking !== undefined) return checking;
    const at = now();
    if (at - lastCheck < CHECK_INTERVAL_MS) return Promise.resolve('skipped');
    lastCheck = at;
    checking = look().finally(() => (checking = undefined));
    return checking;
  }

  const stop = (options.every ?? defaultEvery)(CHECK_INTERVAL_MS, () => void check());
  let closed = false;
  return {
    get reader() {
      return reader;
    },
    countryOf(address) {
      return reader.countryOf(address);
    },
    check,
    close() {
      if (closed) return;
      closed = true;
      stop();
    },
  };
}

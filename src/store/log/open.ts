/**
 * Opening a data directory: create it, take its lock, open the log and replay it.
 *
 * A torn last line (a crash during a write) is copied aside and then cut off; damage anywhere else
 * stops start-up with a message naming the line and the fix, so nothing is dropped silently.
 */
import { beside, COMPACT_SUFFIX, RESTORE_SUFFIX, TORN_SUFFIX } from './files.ts';
import { FORMAT_VERSION, newerFormatMessage } from './format.ts';
import type { StoreFs } from './fs.ts';
import type { Keydir } from './keydir.ts';
import { acquireLock, LockError, type DirLock } from './lock.ts';
import { Replayer, type Damage, type ReplayResult } from './replay.ts';
import type { Logger } from '../../log.ts';

/** Bytes read per step of start-up replay. */
const REPLAY_CHUNK = 4 << 20;

/** Start-up cannot continue: the message names the problem and what to do. */
export class StoreOpenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreOpenError';
  }
}

export interface Opened {
  fd: number;
  lock: DirLock;
  records: Keydir;
  /** Bytes of intact log. */
  size: number;
  entries: number;
  /** A torn tail is past `size`: cut it before the first write (its copy is durable). */
  tailSuspect: boolean;
  /**
   * Intact entries without the version line (a version 1 log): the log is rewritten with it before
   * anything is appended (`log-writer.ts`).
   */
  legacy: boolean;
}

/** Opens (or creates) the log `path` in `dir` and replays it. Throws `StoreOpenError` on damage. */
export function openLog(fs: StoreFs, dir: string, path: string, log: Logger, now: () => number): Opened {
  try {
    fs.mkdirp(dir);
  } catch (err) {
    throw new StoreOpenError(`cannot create data directory ${dir}: ${(err as Error).message}`);
  }
  let lock: DirLock;
  try {
    lock = acquireLock(dir, { log });
  } catch (err) {
    throw new StoreOpenError(err instanceof LockError ? err.message : `cannot lock ${dir}: ${(err as Error).message}`);
  }
  let fd: number;
  let result: ReplayResult & { bytes: number };
  try {
    // A compaction or a rewrite cut short by a crash: the old log is whole, its unfinished copy is not.
    fs.remove(path + COMPACT_SUFFIX);
    fs.remove(path + RESTORE_SUFFIX);
    fd = openFile(fs, dir, path);
    result = replayLog(fs, fd, lock);
  } catch (err) {
    lock.release();
    throw err instanceof StoreOpenError ? err : new StoreOpenError(`cannot read ${path}: ${(err as Error).message}`);
  }
  const giveUp = (message: string): never => {
    void fs.close(fd).catch(() => undefined);
    lock.release();
    throw new StoreOpenError(message);
  };
  // Not damage: a newer build wrote it, and this one must not touch it.
  if (result.version > FORMAT_VERSION) giveUp(newerFormatMessage(path, result.version));
  if (result.damage) giveUp(damageMessage(path, result.damage));
  if (result.tornTail) {
    let copy: string;
    try {
      copy = keepTorn(fs, fd, dir, path, now, result.validBytes, result.bytes);
    } catch (err) {
      return giveUp(
        `${path} ends with a torn entry, and its bytes could not be copied aside before cutting them off ` +
          `(${(err as Error).message}); start-up stopped so that nothing is dropped without a copy. Fix that and start again.`,
      );
    }
    log.warn('log ends with a torn entry (a crash during a write); cutting it off, a copy is kept', {
      file: path,
      line: result.tornTail.line,
      reason: result.tornTail.reason,
      bytes: result.bytes - result.validBytes,
      copy,
    });
  }
  return {
    fd,
    lock,
    records: result.records,
    size: result.validBytes,
    entries: result.entries,
    // The next append must not land after the torn bytes (the copy is durable: cutting them is safe).
    tailSuspect: result.tornTail !== undefined,
    legacy: result.validBytes > 0 && (!result.header || result.version < FORMAT_VERSION),
  };
}

function openFile(fs: StoreFs, dir: string, path: string): number {
  let opened: { fd: number; created: boolean };
  try {
    opened = fs.open(path);
  } catch (err) {
    throw new StoreOpenError(`cannot open ${path}: ${(err as Error).message}`);
  }
  // A new file's directory entry must be durable too, or power loss could lose the whole log.
  if (opened.created) fs.syncDir(dir);
  return opened.fd;
}

/** Replays the log in chunks: the file is never held in memory whole. `bytes`: the file's size. */
function replayLog(fs: StoreFs, fd: number, lock: DirLock): ReplayResult & { bytes: number } {
  const replayer = new Replayer();
  const chunk = Buffer.allocUnsafe(REPLAY_CHUNK);
  let position = 0;
  for (;;) {
    const n = fs.read(fd, chunk, position);
    if (n === 0) break;
    // The timer cannot renew the lease while this runs: a long replay must not let it lapse.
    lock.refresh();
    replayer.push(chunk.subarray(0, n));
    position += n;
  }
  return { ...replayer.finish(), bytes: position };
}

/**
 * Copies the log's bytes [from, to) — a torn tail about to be cut — to a new file beside it,
 * fsynced with its directory entry; returns its path. A torn append is most likely a change that
 * was never acknowledged, but the bytes are the operator's to judge, not ours to destroy.
 */
function keepTorn(fs: StoreFs, fd: number, dir: string, path: string, now: () => number, from: number, to: number): string {
  const tail = Buffer.alloc(to - from);
  for (let at = 0; at < tail.length; ) {
    const n = fs.read(fd, tail.subarray(at), from + at);
    if (n === 0) break;
    at += n;
  }
  const copy = beside(path, TORN_SUFFIX, now(), (to) => fs.writeNew(to, tail));
  fs.syncDir(dir);
  return copy;
}

function damageMessage(path: string, damage: Damage): string {
  if (damage.unknown) {
    return (
      `${path} has at line ${damage.line} an intact entry (its checksum is right) that this build cannot read ` +
      `(log format ${FORMAT_VERSION}): written by a newer version of url-shortener, or by hand. ` +
      'Start-up stopped so that nothing is dropped; --repair does not drop it either. Run a build that reads it, ' +
      'or restore the data directory from a backup.'
    );
  }
  return (
    `${path} is damaged at line ${damage.line} (${damage.reason}): a complete line that is not an intact entry, ` +
    'which a crash during a write cannot leave. ' +
    'Start-up stopped so that nothing is dropped silently. To keep every intact entry and move the ' +
    'damaged file aside, run the server once with --repair (same DATA_DIR); or restore the data ' +
    'directory from a backup.'
  );
}

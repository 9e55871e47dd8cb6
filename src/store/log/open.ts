/**
 * Opening a data directory: create it, take its lock, open the log and replay it: from the start-up
 * checkpoint when there is a good one (`checkpoint.ts`), the log after the bytes it covers; else
 * the whole log, and then, when that was long, a checkpoint is written for the next start.
 *
 * A torn last line (a crash during a write) is copied aside and then cut off; damage anywhere else
 * stops start-up with a message naming the line and the fix, so nothing is dropped silently.
 */
import { checkpointDue, checkpointPath, loadCheckpoint, type Loaded } from './checkpoint.ts';
import { writeCheckpoint } from './checkpoint-writer.ts';
import { beside, COMPACT_SUFFIX, RESTORE_SUFFIX, RETIRED_SUFFIX, TEMP_SUFFIX, TORN_SUFFIX } from './files.ts';
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
  /** Bytes of log the start-up checkpoint on disk covers; 0 when there is none that start-up would use. */
  checkpointed: number;
}

/**
 * Opens (or creates) the log `path` in `dir` and replays it. Throws `StoreOpenError` on damage.
 * `checkpointMinBytes`: see `checkpointDue`.
 */
export function openLog(fs: StoreFs, dir: string, path: string, log: Logger, now: () => number, checkpointMinBytes: number): Opened {
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
  let checkpoint: Loaded | undefined;
  try {
    // A compaction or a rewrite cut short by a crash: the old log is whole, its unfinished copy is not.
    fs.remove(path + COMPACT_SUFFIX);
    fs.remove(path + RESTORE_SUFFIX);
    fs.remove(checkpointPath(path) + TEMP_SUFFIX);
    fs.remove(checkpointPath(path) + RETIRED_SUFFIX);
    fd = openFile(fs, dir, path);
    checkpoint = usableCheckpoint(fs, path, fd, log, checkpointMinBytes);
    result = replayLog(fs, fd, lock, checkpoint);
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
  const legacy = result.validBytes > 0 && (!result.header || result.version < FORMAT_VERSION);
  let checkpointed = checkpoint?.covered.offset ?? 0;
  if (checkpoint) {
    log.info('log replayed from its start-up checkpoint', { file: path, covered_bytes: checkpointed, replayed_bytes: result.validBytes - checkpointed });
  }
  // Memory is now exactly what the log replays to: the moment to take a checkpoint, if the next
  // start would otherwise replay much (a log of an older format is rewritten first: not then).
  if (!legacy && result.header && checkpointDue(result.validBytes, checkpointed, checkpointMinBytes)) {
    lock.refresh();
    checkpointed = saveCheckpoint(fs, path, fd, result.records, { offset: result.validBytes, entries: result.entries }, log) ?? checkpointed;
  }
  return {
    fd,
    lock,
    records: result.records,
    size: result.validBytes,
    entries: result.entries,
    // The next append must not land after the torn bytes (the copy is durable: cutting them is safe).
    tailSuspect: result.tornTail !== undefined,
    legacy,
    checkpointed,
  };
}

/**
 * The start-up checkpoint to replay from, or undefined: none (said when the log is big enough to
 * have one), or one that cannot be used (said with the reason, once).
 */
function usableCheckpoint(fs: StoreFs, path: string, fd: number, log: Logger, minBytes: number): Loaded | undefined {
  const loaded = loadCheckpoint(fs, path, fd);
  if (loaded !== undefined && 'reason' in loaded) {
    log.warn(`the start-up checkpoint is not used: ${loaded.reason}; the whole log is replayed`, { file: checkpointPath(path) });
    return undefined;
  }
  if (loaded === undefined && fs.stat(fd).size >= minBytes) {
    log.warn('there is no start-up checkpoint (a first start, or the log was rewritten since); the whole log is replayed', { file: checkpointPath(path) });
  }
  return loaded;
}

/**
 * Writes the start-up checkpoint of `records` (`writeCheckpoint`); returns the offset it covers, or
 * undefined when it could not be written (a warning: the next start replays more, nothing is lost).
 */
export function saveCheckpoint(
  fs: StoreFs,
  path: string,
  fd: number,
  records: Keydir,
  covered: { offset: number; entries: number },
  log: Logger,
): number | undefined {
  try {
    const { bytes, ms } = writeCheckpoint(fs, path, fd, records, covered);
    log.info('start-up checkpoint written', { file: checkpointPath(path), bytes, covered_bytes: covered.offset, links: records.size, ms });
    return covered.offset;
  } catch (err) {
    log.warn('could not write the start-up checkpoint; the next start replays more of the log', { file: checkpointPath(path), error: (err as Error).message });
    return undefined;
  }
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

/**
 * Replays the log in chunks (the file is never held in memory whole), from the end of what
 * `checkpoint` covers when there is one. `bytes`: the file's size.
 */
function replayLog(fs: StoreFs, fd: number, lock: DirLock, checkpoint: Loaded | undefined): ReplayResult & { bytes: number } {
  const replayer = new Replayer(checkpoint, checkpoint ? 0 : fs.stat(fd).size);
  const chunk = Buffer.allocUnsafe(REPLAY_CHUNK);
  let position = checkpoint?.covered.offset ?? 0;
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

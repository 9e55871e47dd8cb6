/**
 * `--repair`: the way out when start-up refuses a damaged log. Keeps every intact entry, keeps the
 * damaged file (under a new name, never deleted), and says exactly what could not be kept.
 *
 * Crash-safe like every rewrite: the intact lines go to a temp file that is fsynced, the damaged
 * file gets a second name (a hard link, so `urls.log` never stops existing), and the temp file is
 * renamed over `urls.log` in one atomic step; then the directory is fsynced. Every file operation
 * goes through the store's `StoreFs`, so a test can make any of them fail.
 *
 * It drops only what is damaged: a log of a newer format, or an intact line (right checksum) of a
 * shape this build does not know, is refused with `RepairRefusedError` and left as it is: such a
 * line is most likely a newer build's entry, which a newer build reads.
 */
import { join } from 'node:path';
import { checkpointPath } from './checkpoint.ts';
import { DAMAGED_SUFFIX, LOG_FILE, REPAIR_SUFFIX } from './files.ts';
import { FORMAT_VERSION, newerFormatMessage } from './format.ts';
import { nodeFs, type StoreFs } from './fs.ts';
import { acquireLock } from './lock.ts';
import { salvage } from './replay.ts';

interface RepairReport {
  file: string;
  /** Intact entries kept. */
  kept: number;
  /** Damaged lines dropped from the log (still in the moved-aside copy). */
  lost: { line: number; reason: string; bytes: number }[];
  /** Where the damaged file now is; undefined when nothing needed repair. */
  movedTo: string | undefined;
}

/** `--repair` will not touch this log (see the top of this file); the message says why and what to do. */
export class RepairRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RepairRefusedError';
  }
}

export function repairLog(dir: string, now: Date = new Date(), fs: StoreFs = nodeFs): RepairReport {
  const lock = acquireLock(dir);
  try {
    const file = join(dir, LOG_FILE);
    const { intact, lost, version } = salvage(fs.exists(file) ? fs.readAll(file) : Buffer.alloc(0));
    if (version > FORMAT_VERSION) throw new RepairRefusedError(newerFormatMessage(file, version));
    const unknown = lost.filter((l) => l.unknown).map((l) => l.line);
    if (unknown.length > 0) {
      throw new RepairRefusedError(
        `${file} has intact entries (their checksums are right) that this build cannot read (log format ${FORMAT_VERSION}), ` +
          `at line${unknown.length > 1 ? 's' : ''} ${unknown.slice(0, 10).join(', ')}${unknown.length > 10 ? ', …' : ''}: ` +
          'written by a newer version of url-shortener, or by hand. --repair drops only damaged lines, so it changed nothing; ' +
          'run a build that reads them, or restore the data directory from a backup.',
      );
    }
    if (lost.length === 0) return { file, kept: intact.length, lost, movedTo: undefined };

    const temp = file + REPAIR_SUFFIX;
    // Left by a repair cut short: its content is rebuilt here.
    fs.remove(temp);
    fs.writeNew(temp, Buffer.concat(intact));
    const movedTo = `${file}${DAMAGED_SUFFIX}${now.toISOString().replace(/[:.]/g, '-')}`;
    fs.link(file, movedTo);
    // A start-up checkpoint covers the damaged log, not the repaired one: gone before the rename.
    fs.remove(checkpointPath(file));
    fs.syncDir(dir);
    fs.rename(temp, file);
    fs.syncDir(dir);
    return { file, kept: intact.length, lost, movedTo };
  } finally {
    lock.release();
  }
}

/**
 * `--repair`: the way out when start-up refuses a damaged log. Keeps every intact entry, keeps the
 * damaged file (under a new name, never deleted), and says exactly what could not be kept.
 *
 * Crash-safe like every rewrite: the intact lines go to a temp file that is fsynced, the damaged
 * file gets a second name (a hard link, so `urls.log` never stops existing), and the temp file is
 * renamed over `urls.log` in one atomic step; then the directory is fsynced.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { salvage } from './format.ts';
import { nodeFs } from './fs.ts';
import { acquireLock } from './lock.ts';
import { LOG_FILE } from './files.ts';

export interface RepairReport {
  file: string;
  /** Intact entries kept. */
  kept: number;
  /** Damaged lines dropped from the log (still in the moved-aside copy). */
  lost: { line: number; reason: string; bytes: number }[];
  /** Where the damaged file now is; undefined when nothing needed repair. */
  movedTo: string | undefined;
}

export function repairLog(dir: string, now: Date = new Date()): RepairReport {
  const lock = acquireLock(dir);
  try {
    const file = join(dir, LOG_FILE);
    const { intact, lost } = salvage(fs.existsSync(file) ? fs.readFileSync(file) : Buffer.alloc(0));
    if (lost.length === 0) return { file, kept: intact.length, lost, movedTo: undefined };

    const temp = `${file}.repair`;
    const fd = fs.openSync(temp, 'w', 0o600);
    try {
      for (const line of intact) fs.writeSync(fd, line);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    const movedTo = `${file}.damaged-${now.toISOString().replace(/[:.]/g, '-')}`;
    fs.linkSync(file, movedTo);
    fs.renameSync(temp, file);
    nodeFs.syncDir(dir);
    return { file, kept: intact.length, lost, movedTo };
  } finally {
    lock.release();
  }
}

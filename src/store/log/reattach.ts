/**
 * The data directory removed (or the log replaced) under the running process, and taken back.
 *
 * The log writer notices before anyone is answered (see `log-writer.ts`) and the store is
 * *detached*: memory, which holds every acknowledged change, stays as it was, and every write is
 * refused until the directory exists again; then the lock is taken again and the whole log
 * rewritten from memory, like a compaction (`compaction.ts`), and writes go on.
 */
import { acquireLock } from './lock.ts';
import { beside, REPLACED_SUFFIX, RESTORE_SUFFIX } from './files.ts';
import { discard, install, writeRecords, type StoreParts } from './log-rewrite.ts';
import { errorKind } from './write-errors.ts';

export class Reattacher {
  /** The log is being rewritten from memory: slots must not be renumbered. */
  restoring = false;

  constructor(private readonly parts: StoreParts) {}

  /**
   * Before a write is queued: the error to refuse it with when the lock was taken by another server
   * over a log still ours (that server writes here now). A lock file gone with the log (the
   * directory was removed) detaches the store instead, which the write loop takes back once the
   * directory is there again.
   */
  lockLost(): Error | undefined {
    const { parts } = this;
    const lost = parts.lock ? parts.lock.lost() : undefined;
    if (!lost) return undefined;
    if (parts.fs.isAt(parts.writer.fd, parts.path)) return lost;
    parts.writer.detached = true;
    return undefined;
  }

  /** From the timer: back without waiting for a write, so that a directory restored while idle gets its log. */
  poll(): void {
    const { parts } = this;
    if (parts.writer.detached && !this.restoring && parts.fs.exists(parts.dir)) void parts.writer.exclusive(() => this.ifDetached()).catch(() => undefined);
  }

  /** At close: a last chance for a detached store whose directory is back (with no write to notice it). */
  async lastChance(): Promise<void> {
    if (this.parts.writer.detached) await this.parts.writer.exclusive(() => this.ifDetached()).catch(() => undefined);
  }

  /** `reattach` as a queued task (the timer, shutdown), if still detached by then. */
  private async ifDetached(): Promise<void> {
    if (this.parts.writer.detached) await this.reattach();
  }

  /**
   * Takes the data directory back after the log was removed or replaced under us; true when writes
   * can go on. Memory holds every acknowledged change, so the whole log is rewritten from it like a
   * compaction (temp file, fsync, rename, fsync of the directory). Runs with the write queue held.
   */
  async reattach(): Promise<boolean> {
    const { parts } = this;
    const { fs } = parts;
    // A directory the operator removed is not recreated behind their back: wait until it is back.
    if (!fs.exists(parts.dir)) return false;
    // The lock file may have gone with the directory. Taken again, it also tells whether another
    // process has taken the directory meanwhile: then it is theirs, and this store stays detached.
    try {
      parts.lock?.release();
      parts.lock = undefined;
      parts.lock = acquireLock(parts.dir, { log: parts.log });
    } catch (err) {
      parts.problems.report('error', 'storage:lock', 'the data directory is back but its lock cannot be taken again; writes stay refused', {
        dir: parts.dir,
        error: (err as Error).message,
      });
      return false;
    }
    const temp = parts.path + RESTORE_SUFFIX;
    this.restoring = true;
    let fd: number | undefined;
    try {
      fd = fs.create(temp);
      const written = await writeRecords(parts, fd);
      await fs.fsync(fd);
      // A file at the path now is not ours (ours was removed or replaced): kept, never overwritten.
      // Linked only now, so that a failed attempt (a full disk) rarely leaves one more name behind.
      const kept = fs.exists(parts.path) ? beside(parts.path, REPLACED_SUFFIX, parts.now(), (to) => fs.link(parts.path, to)) : undefined;
      if (kept) parts.log.warn('a file had replaced the log; it is kept under another name', { file: parts.path, kept });
      await install(parts, temp, fd, written, 'log rewritten from memory');
      parts.writer.detached = false;
      parts.writer.writable({ rewritten_from_memory: written.lines });
      return true;
    } catch (err) {
      await discard(fs, temp, fd);
      const kind = errorKind(err);
      parts.problems.report('error', `storage:${kind}`, 'the data directory is back but the log could not be rewritten; writes stay refused', {
        file: parts.path,
        error: kind,
      });
      return false;
    } finally {
      this.restoring = false;
    }
  }
}

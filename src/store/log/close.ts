/**
 * Closing the log, the last step of `LogEngine.close` once nothing more is written: wait for the queued
 * writes, say what could not be saved, cut what was refused, fsync, close the file, free the lock.
 *
 * Its own file as the counterpart of `open.ts`: what start-up takes (the lock, the file descriptor,
 * a suspect tail), this gives back.
 */
import { checkpointDue } from './checkpoint.ts';
import type { StoreParts } from './log-rewrite.ts';
import { saveCheckpoint } from './open.ts';

/**
 * `quiet`: no visit waits to be written, so memory is what the log replays to, and a start-up
 * checkpoint may be taken (when enough was written since the last one).
 */
export async function closeLog(parts: StoreParts, quiet: () => boolean): Promise<void> {
  const { writer } = parts;
  await writer.idle();
  // A retired checkpoint's blocks are freed before the lock is: the next start finds no leftover.
  await parts.checkpoint.retiring;
  // Failures counted since the last summary are not left unsaid.
  parts.problems.flush(true);
  if (writer.detached) {
    // The directory was removed and is still gone: it is not recreated behind the operator's back.
    parts.log.error('the data directory was removed and is not back: the links held only in memory are lost at exit', {
      dir: parts.dir,
      records: parts.records.size,
    });
  }
  try {
    if (writer.tailSuspect && !(await writer.cutTail())) {
      // Still failing at close: bytes of a refused change stay past the intact end. A torn line is
      // cut at start-up, but a whole one would replay; say so rather than hide it.
      parts.log.error('could not cut unacknowledged bytes from the log; a refused change may reappear after restart', {
        file: parts.path,
        intact_bytes: writer.size,
      });
    }
    await parts.fs.fsync(writer.fd);
    const { checkpoint } = parts;
    if (
      quiet() &&
      !writer.detached &&
      !writer.legacy &&
      !writer.tailSuspect &&
      parts.lock !== undefined &&
      !parts.lock.lost() &&
      checkpointDue(writer.size, checkpoint.covered, checkpoint.minBytes)
    ) {
      checkpoint.covered =
        saveCheckpoint(parts.fs, parts.path, writer.fd, parts.records, { offset: writer.size, entries: writer.entries }, parts.log) ?? checkpoint.covered;
    }
  } finally {
    await parts.fs.close(writer.fd);
    parts.lock?.release();
  }
}

/**
 * Closing the log, the last step of `Store.close` once nothing more is written: wait for the queued
 * writes, say what could not be saved, cut what was refused, fsync, close the file, free the lock.
 *
 * Its own file as the counterpart of `open.ts`: what start-up takes (the lock, the file descriptor,
 * a suspect tail), this gives back.
 */
import type { StoreParts } from './compaction.ts';

export async function closeLog(parts: StoreParts): Promise<void> {
  const { writer } = parts;
  await writer.idle();
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
  } finally {
    await parts.fs.close(writer.fd);
    parts.lock?.release();
  }
}

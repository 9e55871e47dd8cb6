/**
 * What a failed write of the log is (docs/storage.md, durability): its kind for counting repeats,
 * whether its bytes never reached the file (a visit of a limited link is then given back), and the
 * data file gone from under the process, and what a caller of the store is told of it.
 */
import { StoreUnavailableError } from '../link-store.ts';

/**
 * A write refused because the log was removed or replaced under the running process (see the top of
 * `log-writer.ts`). The message is for clients: it names no path.
 */
export class DataFileGoneError extends Error {
  constructor() {
    super('the data file was removed or replaced while the server runs; nothing was changed, try again once its directory is back');
    this.name = 'DataFileGoneError';
  }
}

/** What a failure is, for counting repeats: its errno code (ENOSPC, EIO…), else its name. */
export function errorKind(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : err instanceof Error ? err.name : 'error';
}

/**
 * Errnos of a write the file system refused (no space, quota, read-only): the bytes did not reach
 * the file. A failed fsync is another matter, whatever its errno: the bytes may be on disk or not.
 */
const REFUSED = new Set(['ENOSPC', 'EDQUOT', 'EROFS']);

/** The failures of batches that never reached the log (see `neverWritten`). */
const unwritten = new WeakSet<object>();

/**
 * True when `err` rejected a batch whose write was refused before any fsync (an errno of `REFUSED`):
 * nothing of it stays in the log. Part of the batch may have been written before the refusal, but
 * it is cut off at once (`LogWriter`'s `drain`); only if that cut fails too and the process dies before it is
 * retried can a restart see those lines, and then it sees more than was acknowledged, never less.
 * A counted visit of a limited link is given back on such a failure (`visit-counts.ts`).
 */
export function neverWritten(err: unknown): boolean {
  return typeof err === 'object' && err !== null && unwritten.has(err);
}

/** Marks `err` as `neverWritten` when its errno says the write was refused. */
export function markRefused(err: unknown): void {
  if (typeof err === 'object' && err !== null && REFUSED.has(errorKind(err))) unwritten.add(err);
}

/**
 * A failed log write (an errno from the file system: ENOSPC, EROFS, EIO…, or the data file removed
 * under the process) is `StoreUnavailableError`: the change was not made, and the client may
 * retry. Anything else is a bug and goes on as it is. The store has logged the failure (once, then
 * in summaries: a full disk fails every request).
 */
export function unwritable(err: unknown): unknown {
  if (err instanceof DataFileGoneError) return new StoreUnavailableError(err.message);
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code !== 'string' || !/^E[A-Z0-9]+$/.test(code)) return err;
  return new StoreUnavailableError(`storage is not writable right now (${code}); nothing was changed, try again later`);
}

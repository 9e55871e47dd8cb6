/**
 * The names of the files the store keeps in its data directory, beside the log: the log itself, the
 * temp files of its rewrites (a crash can leave one; the next start removes it), and the copies it
 * keeps instead of destroying bytes (a torn tail, a file that replaced the log).
 */
export const LOG_FILE = 'urls.log';

/** Suffix of the copy of a torn tail kept beside the log, followed by Unix seconds. */
export const TORN_SUFFIX = '.torn-';

/** Suffix of a file found at the log's path after ours was replaced, kept beside it; then Unix seconds. */
export const REPLACED_SUFFIX = '.replaced-';
/** Suffix of the temp file of a log rewritten from memory after it was removed. */
export const RESTORE_SUFFIX = '.restore';

/** Suffix of the start-up checkpoint beside the log (`checkpoint.ts`); its temp file adds `TEMP_SUFFIX`. */
export const CHECKPOINT_SUFFIX = '.checkpoint';
/** Suffix of a checkpoint a compaction retired: renamed at once, its blocks freed off the event loop. */
export const RETIRED_SUFFIX = '.retired';
export const TEMP_SUFFIX = '.tmp';

/** Suffix of the compaction temp file beside the log. */
export const COMPACT_SUFFIX = '.compact';

/** Suffix of the temp file of `--repair`. */
export const REPAIR_SUFFIX = '.repair';
/** Suffix of a damaged log moved aside by `--repair`, followed by an ISO time. */
export const DAMAGED_SUFFIX = '.damaged-';

/**
 * Calls `put` with a new name beside the log, `<log><suffix><Unix seconds>`, until one does not
 * exist yet (`put` throws EEXIST): two in one second (a crash right after a start) must not
 * overwrite each other. Returns the name used.
 */
export function beside(logPath: string, suffix: string, nowMs: number, put: (path: string) => void): string {
  const base = `${logPath}${suffix}${Math.floor(nowMs / 1000)}`;
  for (let i = 1; ; i++) {
    const path = i === 1 ? base : `${base}.${i}`;
    try {
      put(path);
      return path;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || i >= 100) throw err;
    }
  }
}

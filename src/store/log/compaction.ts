/**
 * Compaction: the log rewritten with one entry per live record, expired records left out; the new
 * log starts with the version line (`format.ts`), and an edited record is written as a plain create.
 *
 * The live records are written into a temp file while writes go on to the old log and are also
 * kept aside; then, with the write queue held, the kept-aside writes are appended, the temp file is
 * fsynced and renamed over the log, and the directory is fsynced. A crash before the rename leaves
 * the old log whole (the temp file is removed at the next start); after it, the new.
 *
 * A compaction also writes the start-up checkpoint of the new log (`checkpoint.ts`): each slot is
 * copied into it in the same turn as its line is encoded, so it holds what the new log's lines up to
 * the kept-aside writes say, and is renamed into place right after the new log. A failure to write
 * it is a warning; the compaction goes on without it.
 *
 * How the records are written and the new log installed is `log-rewrite.ts`, which is also how a
 * removed log is rewritten from memory (`reattach.ts`).
 */
import { performance } from 'node:perf_hooks';
import { CompactionCheckpoint } from './compaction-checkpoint.ts';
import { COMPACT_SUFFIX } from './files.ts';
import { FORMAT_VERSION } from './format.ts';
import { discard, install, writeRecords, type StoreParts, type Written } from './log-rewrite.ts';

/** Automatic compaction waits until the log is at least this big: small logs are not worth it. */
export const COMPACT_MIN_BYTES = 1 << 20;

export interface CompactReport {
  bytesBefore: number;
  bytesAfter: number;
  entriesBefore: number;
  entriesAfter: number;
  /** Expired records dropped. */
  purged: number;
  ms: number;
}

/** Rewrites the log of `parts`; the caller makes sure only one runs at a time. */
export async function compactLog(parts: StoreParts): Promise<CompactReport> {
  const { fs, writer } = parts;
  const started = performance.now();
  const bytesBefore = writer.size;
  const entriesBefore = writer.entries;
  const temp = parts.path + COMPACT_SUFFIX;
  const fd = fs.create(temp);
  const checkpoint = CompactionCheckpoint.start(parts);
  let written: Written;
  // From here on every write to the old log is also kept for the new one.
  writer.keepSide();
  try {
    written = await writeRecords(parts, fd, checkpoint);
    // The checkpoint covers the new log up to here: the kept-aside writes come after.
    const covered = { offset: written.size, entries: written.lines };
    await checkpoint?.finish(fd, covered);
    await writer.exclusive(async () => {
      const side = writer.takeSide()!;
      // Records changed while the snapshot was written are in `side`, later: the last entry wins.
      for (const chunk of side.chunks) {
        await fs.write(fd, chunk, written.size);
        written.size += chunk.length;
      }
      written.lines += side.lines;
      await install(parts, temp, fd, written, 'log compacted', checkpoint && { checkpoint, covered });
    });
  } catch (err) {
    // Every failure comes before the rename: the old log is still the log.
    writer.takeSide();
    checkpoint?.drop();
    await discard(fs, temp, fd);
    throw err;
  }
  return {
    bytesBefore,
    bytesAfter: written.size,
    entriesBefore,
    entriesAfter: written.lines,
    purged: written.expired.length,
    ms: Math.round(performance.now() - started),
  };
}

/**
 * Rewrites a log without a version line (format 1) from memory, with the write queue held (the
 * writer calls it before its first batch): from then on the log says which format it holds.
 */
export async function upgradeLog(parts: StoreParts): Promise<CompactReport> {
  const { fs, writer } = parts;
  const started = performance.now();
  const before = { bytesBefore: writer.size, entriesBefore: writer.entries };
  const temp = parts.path + COMPACT_SUFFIX;
  let fd: number | undefined;
  let written: Written;
  try {
    fd = fs.create(temp);
    written = await writeRecords(parts, fd);
    await install(parts, temp, fd, written, 'log rewritten with its format version line');
  } catch (err) {
    await discard(fs, temp, fd);
    throw err;
  }
  const report = {
    ...before,
    bytesAfter: written.size,
    entriesAfter: written.lines,
    purged: written.expired.length,
    ms: Math.round(performance.now() - started),
  };
  parts.log.info('log rewritten with its format version line (a log of format 1 gets entries of a newer format only once it says so)', {
    file: parts.path,
    format: FORMAT_VERSION,
    ...report,
  });
  return report;
}

/**
 * The rewrite of a format 1 log right after start-up, queued ahead of any write; resolves with its
 * report, or one of an unchanged log when a write's own upgrade (`log-writer.ts`) came first.
 */
export function upgradeAtStart(parts: StoreParts, opened: { size: number; entries: number }): Promise<CompactReport> {
  let report: CompactReport | undefined;
  const upgrade = parts.writer.exclusive(async () => {
    if (parts.writer.legacy) report = await upgradeLog(parts);
  });
  const unchanged = { bytesBefore: opened.size, bytesAfter: opened.size, entriesBefore: opened.entries, entriesAfter: opened.entries, purged: 0, ms: 0 };
  return upgrade.then(() => report ?? unchanged);
}

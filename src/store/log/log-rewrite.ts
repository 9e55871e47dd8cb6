/**
 * A log rewritten from memory: the version line, the referrer hosts, the stored API keys, then one
 * create per live record with its events, a slice per event-loop turn (`writeRecords`), into a
 * temp file that `install` makes the log (fsync, rename, the directory fsynced), or `discard` gives
 * up. A compaction (`compaction.ts`) and the reattach of a removed data dir (`reattach.ts`) both
 * rewrite the log so.
 */
import { webhookEntries } from './webhook-format.ts';
import { checkpointPath, type Covered } from './checkpoint.ts';
import type { CompactionCheckpoint } from './compaction-checkpoint.ts';
import { RETIRED_SUFFIX } from './files.ts';
import { encodeEntry, HEADER, isExpired, recordEntry } from './format.ts';
import type { StoreFs } from './fs.ts';
import type { Keydir } from './keydir.ts';
import type { DirLock } from './lock.ts';
import type { LogWriter } from './log-writer.ts';
import type { Logger } from '../../log.ts';
import type { RepeatLog } from '../../log-throttle.ts';
import { STRIDE } from '../../visits/packed.ts';

/**
 * Records serialized (and copied into the checkpoint) per event-loop turn while compacting: about
 * 5 ms once the code is optimized, 20 ms in the first turns before. A count, not a clock, so that
 * a compaction takes the same steps every time (the crash tests stop at each).
 */
const COMPACT_SLICE = 4096;
/** Or events: encoding one takes about half a microsecond. */
const EVENTS_PER_SLICE = 10_000;

/** The parts of a store that a rewrite of its log works on (compaction, and the reattach). */
export interface StoreParts {
  readonly fs: StoreFs;
  readonly dir: string;
  readonly path: string;
  readonly log: Logger;
  /** Failures that repeat (a full disk fails every write) are logged once, then summarized. */
  readonly problems: RepeatLog;
  readonly now: () => number;
  readonly records: Keydir;
  readonly writer: LogWriter;
  /** The data dir's lock; undefined while not held (the directory was removed with the lock file). */
  lock: DirLock | undefined;
  /**
   * The start-up checkpoint (`checkpoint.ts`): the bytes of log the one on disk covers (0: none),
   * how much log past it makes a new one worth writing, and the removal of one a compaction
   * retired, while it runs (`close` waits for it).
   */
  readonly checkpoint: { covered: number; readonly minBytes: number; retiring?: Promise<void> };
}

/**
 * What `writeRecords` wrote: bytes, entries, the slots of the expired records it left out, and the
 * referrer numbers whose hosts it named (`R`).
 */
export interface Written {
  size: number;
  lines: number;
  expired: number[];
  referrers: number[];
}

/**
 * Writes the version line and one create per live record to `fd`, a slice per event-loop turn;
 * expired records are left out. With `checkpoint`, each record written is copied into it in the
 * same turn, and each slice's block written after the slice.
 */
export async function writeRecords(parts: StoreParts, fd: number, checkpoint?: CompactionCheckpoint): Promise<Written> {
  // The version line is not an entry: `lines` counts entries only.
  const written: Written = { size: 0, lines: 0, expired: [], referrers: [] };
  const nowSeconds = Math.floor(parts.now() / 1000);
  // Slot numbers are stable meanwhile: no vacuum runs during a rewrite.
  const records = parts.records;
  const slots = records.slotsOldestFirst();
  // The version line goes out with the first slice (or alone, when no record is live), and the
  // referrer hosts right after it, before any event that names one; then one added-line per stored
  // key as it is now (its last use included), taken in the same turn as the writes to keep aside
  // begin (`compaction.ts`): those that change a key come after it.
  const named = [...records.events.referrers.entries()];
  const keys = records.accessKeys.list();
  const domains = records.domains.entries();
  const orphans = records.orphans.all();
  const webhooks = records.webhooks.image();
  checkpoint?.names(named, keys, domains, records.orphans.rows(), records.webhooks.size > 0 ? webhooks : undefined);
  written.referrers = named.map(([n]) => n);
  const referrers = named.map(([n, host]) => encodeEntry({ op: 'R', n, host }));
  const keyLines = keys.map((key) => encodeEntry({ op: 'A', key }));
  const domainLines = domains.map(([host, redirects]) => encodeEntry({ op: 'H', host, redirects }));
  const orphanLines = orphans.map((visit) => encodeEntry({ op: 'O', visit }));
  const webhookLines = webhookEntries(webhooks).map(encodeEntry);
  let header: Buffer | undefined = Buffer.concat([HEADER, ...referrers, ...keyLines, ...domainLines, ...orphanLines, ...webhookLines]);
  written.lines += referrers.length + keyLines.length + domainLines.length + orphanLines.length + webhookLines.length;
  for (let done = false; !done; ) {
    const chunks: Buffer[] = header ? [header] : [];
    for (let n = 0; n < COMPACT_SLICE; n++) {
      const next = slots.next();
      if (next.done) {
        done = true;
        break;
      }
      const rec = records.record(next.value);
      if (isExpired(rec, nowSeconds)) written.expired.push(next.value);
      else {
        chunks.push(encodeEntry(recordEntry(rec)));
        // A link's events weigh in too: a slice holds about COMPACT_SLICE records' or
        // EVENTS_PER_SLICE events' worth of lines, so many events never hold the loop long.
        n += (eventLines(records, next.value, rec.code, chunks) * COMPACT_SLICE) / EVENTS_PER_SLICE;
        checkpoint?.add(records, next.value);
      }
    }
    if (chunks.length === 0) continue;
    const chunk = Buffer.concat(chunks);
    await checkpoint?.flush();
    await parts.fs.write(fd, chunk, written.size);
    written.size += chunk.length;
    written.lines += header ? chunks.length - 1 : chunks.length;
    header = undefined;
  }
  return written;
}

/** Events per line of a rewritten log. */
export const EVENTS_PER_LINE = 4096;

/**
 * The lines of slot `s`'s events, appended to `chunks`: a `K` (the link's events are these, numbered
 * below its next number) and `J` lines for the rest; none for a link without events. Returns the
 * number of events.
 */
function eventLines(records: StoreParts['records'], s: number, code: string, chunks: Buffer[]): number {
  const events = records.events;
  const n = events.length(s);
  if (n === 0) return 0;
  const data = events.data(s)!;
  for (let i = 0; i < n; i += EVENTS_PER_LINE) {
    const part = data.slice(i * STRIDE, Math.min(n, i + EVENTS_PER_LINE) * STRIDE);
    chunks.push(encodeEntry(i === 0 ? { op: 'K', code, seq: events.nextSeq(s), events: part } : { op: 'J', code, events: part }));
  }
  return n;
}

/** Gives up a rewrite's temp file before it was installed. */
export async function discard(fs: StoreFs, temp: string, fd: number | undefined): Promise<void> {
  if (fd !== undefined) await fs.close(fd).catch(() => undefined);
  try {
    fs.remove(temp);
  } catch {
    // Removed at the next start.
  }
}

/**
 * Makes `temp`, written whole through `fd`, the log: fsync, rename over the log (and `fresh`'s
 * checkpoint into place beside it), fsync of the directory. Runs with the write queue held. Throws
 * only before the rename, while the old log is still the log.
 */
export async function install(
  parts: StoreParts,
  temp: string,
  fd: number,
  written: Written,
  what: string,
  fresh?: { checkpoint: CompactionCheckpoint; covered: Covered },
): Promise<void> {
  const { fs } = parts;
  await fs.fsync(fd);
  const lost = parts.lock?.lost();
  if (lost) throw lost; // another server's log may be there now
  // The checkpoint covers the old log: gone for good before the new log takes its place, so that
  // no crash leaves it beside a log it does not describe. A rename takes it away at once; its
  // blocks are freed later, off the event loop (`removeLater`), and by start-up after a crash.
  const checkpoint = checkpointPath(parts.path);
  let retired: string | undefined;
  if (parts.checkpoint.covered > 0 || fs.exists(checkpoint)) {
    if (fs.exists(checkpoint)) {
      retired = checkpoint + RETIRED_SUFFIX;
      fs.rename(checkpoint, retired);
    }
    fs.syncDir(parts.dir);
    parts.checkpoint.covered = 0;
  }
  fs.rename(temp, parts.path);
  // The temp file's descriptor now is the log's: no reopen that could fail after the rename.
  const old = parts.writer.replace(fd, written.size, written.lines);
  fresh?.checkpoint.install(fresh.covered);
  // Only the very records left out: a code deleted and created anew meanwhile has a new slot,
  // and is in the new log.
  for (const s of written.expired) parts.records.remove(s);
  // The new log names every referrer host numbered when it was written: none needs its `R` line
  // again (nor is one missing from a checkpoint taken later, which keeps only the named ones).
  for (const n of written.referrers) parts.records.events.referrers.markWritten(n);
  await fs.close(old).catch(() => undefined);
  if (retired !== undefined) {
    const gone = retired;
    parts.checkpoint.retiring = fs
      .removeLater(gone)
      .catch((err: Error) => parts.log.warn('a retired start-up checkpoint could not be removed', { file: gone, error: err.message }));
  }
  // Until the directory is fsynced, power loss could bring the old log back; so no write is
  // acknowledged before this returns (the write queue is held).
  try {
    fs.syncDir(parts.dir);
  } catch (err) {
    parts.log.error(`${what}, but its directory could not be fsynced: power loss could bring back the old log`, {
      error: (err as Error).message,
    });
  }
}

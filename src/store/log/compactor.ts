/**
 * When the log is compacted (docs/storage.md, compaction): once dead entries outweigh live ones
 * and the log is past a size floor, checked every tick; on demand (`--compact`, tests); and, for a
 * log of format 1, right after start-up, to write its version line. One compaction at a time: a
 * call while one runs gets the same promise. How a compaction is done is `compaction.ts`.
 */
import { compactLog, upgradeAtStart, type CompactReport } from './compaction.ts';
import type { StoreParts } from './log-rewrite.ts';
import { errorKind } from './write-errors.ts';

export class Compactor {
  /** The compaction under way, if any: vacuums and shutdown wait for it. */
  running: Promise<CompactReport> | undefined;

  constructor(
    private readonly parts: StoreParts,
    /** Dead entries must outweigh live ones *and* the log pass this size before compacting by itself. */
    private readonly minBytes: number,
    opened: { legacy: boolean; size: number; entries: number },
  ) {
    if (opened.legacy) {
      // A log of format 1 is rewritten with its version line now, rather than at the first write
      // (which it would hold up); until then it is a compaction (no vacuum, no second one).
      this.running = upgradeAtStart(parts, opened).finally(() => (this.running = undefined));
      // A failure is retried before the first write (which is refused meanwhile).
      this.running.catch((err: Error) =>
        parts.problems.report(
          'warn',
          `compaction:${errorKind(err)}`,
          'could not rewrite the log with its format version line; will retry before the next write',
          { error: err.message },
        ),
      );
    }
  }

  /** Compacts now, or joins the compaction under way. */
  run(): Promise<CompactReport> {
    return (this.running ??= compactLog(this.parts).finally(() => (this.running = undefined)));
  }

  /** Starts a compaction when dead entries outweigh live ones and the log is past the size floor. */
  maybe(): void {
    const { records, writer, problems, log } = this.parts;
    // A compacted log holds a line per link and one per 4,096 of its events, and one per stored
    // key, domain with redirects and orphan visit kept; the lines of visits written since (a few
    // events each) count as live until the events are a line's worth.
    const kept = records.accessKeys.size + records.domains.size + records.orphans.size;
    const live = records.size + kept + Math.ceil(records.events.total / 64);
    if (this.running || writer.detached || writer.size < this.minBytes || writer.entries - live <= live) return;
    this.run().then(
      (report) => {
        problems.resolved('compaction:');
        log.info('log compacted', { ...report });
      },
      // Retried every tick while dead entries outweigh live ones: on a full disk, that repeats.
      (err: Error) => problems.report('warn', `compaction:${errorKind(err)}`, 'compaction failed; the log is unchanged', { error: err.message }),
    );
  }
}

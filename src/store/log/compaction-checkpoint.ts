/**
 * The start-up checkpoint a compaction writes of the new log (docs/storage.md, the start-up
 * checkpoint): a `CheckpointWriter` that `writeRecords` gives each record in the same turn as it
 * encodes the record's line, whose blocks are written between turns, and which `install` renames
 * into place right after the new log. A failure to write it gives the checkpoint up with a warning,
 * never the compaction.
 */
import type { WebhookImage } from './webhook-table.ts';
import type { DomainRedirects } from '../domain-store.ts';
import { checkpointDue, checkpointPath, type Covered } from './checkpoint.ts';
import { CheckpointWriter } from './checkpoint-writer.ts';
import type { StoreParts } from './log-rewrite.ts';
import type { Keydir } from './keydir.ts';
import type { KeyRecord } from '../key-store.ts';

export class CompactionCheckpoint {
  private constructor(
    private readonly parts: StoreParts,
    private writer: CheckpointWriter | undefined,
  ) {}

  /** A checkpoint for the compaction about to start; undefined when the log is too small for one. */
  static start(parts: StoreParts): CompactionCheckpoint | undefined {
    if (!checkpointDue(parts.writer.size, 0, parts.checkpoint.minBytes)) return undefined;
    try {
      // Slots made from now on may repeat a code copied before (`CheckpointWriter`, `lateFrom`).
      return new CompactionCheckpoint(parts, new CheckpointWriter(parts.fs, parts.path, parts.records.hashSeed, false, parts.records.end));
    } catch (err) {
      failed(parts, err);
      return undefined;
    }
  }

  /** The referrer hosts, the stored API keys and the domains' redirects the new log names first (`writeRecords`). */
  names(referrers: [number, string][], keys: readonly KeyRecord[], domains: [string, DomainRedirects][], orphans: unknown[][], webhooks?: WebhookImage): void {
    this.writer?.names(referrers, keys, domains, orphans, webhooks);
  }

  /** Copies the live slot `s`, whose line was just encoded. */
  add(records: Keydir, s: number): void {
    this.writer?.add(records, s);
  }

  /** Writes the slots copied since the last block. */
  flush(): Promise<void> {
    return this.step((writer) => writer.flush());
  }

  /**
   * Ends the checkpoint, which covers the new log up to `covered` (the lines the compaction wrote;
   * the writes kept aside come after): none when those are too small for one.
   */
  finish(logFd: number, covered: Covered): Promise<void> {
    if (!checkpointDue(covered.offset, 0, this.parts.checkpoint.minBytes)) this.drop();
    return this.step((writer) => writer.finish(logFd, covered));
  }

  /**
   * Renames the finished checkpoint into place, right after the new log's rename (the caller then
   * fsyncs the directory). A crash between the two leaves the new log without one: one full
   * replay. Should power loss bring back the old log, this checkpoint is not of it, and not used.
   */
  install(covered: Covered): void {
    const { writer, parts } = this;
    if (writer === undefined) return;
    try {
      const { bytes, links, ms } = writer.install();
      parts.checkpoint.covered = covered.offset;
      parts.log.info('start-up checkpoint written', { file: checkpointPath(parts.path), bytes, covered_bytes: covered.offset, links, ms, by: 'compaction' });
    } catch (err) {
      this.drop();
      failed(parts, err);
    }
  }

  /** Gives the checkpoint up (its temp file removed). */
  drop(): void {
    this.writer?.abandon();
    this.writer = undefined;
  }

  private async step(run: (writer: CheckpointWriter) => Promise<void>): Promise<void> {
    const { writer } = this;
    if (writer === undefined) return;
    try {
      await run(writer);
    } catch (err) {
      this.drop();
      failed(this.parts, err);
    }
  }
}

function failed(parts: StoreParts, err: unknown): void {
  parts.log.warn('could not write the start-up checkpoint of the compacted log; the next start replays more of the log', {
    file: checkpointPath(parts.path),
    error: (err as Error).message,
  });
}

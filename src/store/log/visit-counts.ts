/**
 * Visit counts. A visit is not worth an fsync: it bumps an integer in memory, and the counts of the
 * codes visited since the last flush are appended as count-batch entries (op `V`, absolute counts;
 * see `format.ts`) at least once a second and at close. A crash loses at most those seconds of
 * counts, never a link.
 *
 * A link with a visit limit is the exception: a lost count could grant a visit twice, so each of
 * its counted visits is written at once, as a count entry of its new absolute count that joins the
 * group commit (`countDurably`), and a link that gets a limit has its count so far written with
 * the edit (`log-engine.ts`, `write`). Both read the count when they queue, the log writes in queue
 * order: the counts on disk never go down, but for a visit given back (see there). */
import { encodeEntry, type Entry } from './format.ts';
import { eventEntries, eventLines, keptEvents, PENDING, referrerEntries, renumbered } from './pending-events.ts';
import type { EncodedLines } from './log-writer.ts';
import type { InsertChain } from '../link-store.ts';
import type { VisitEvent } from '../../visits/event.ts';
import { packAttrs } from '../../visits/packed.ts';
import type { Keydir } from './keydir.ts';
import { errorKind, neverWritten } from './write-errors.ts';
import type { RepeatLog } from '../../log-throttle.ts';
import type { LogWebhooks } from './log-webhooks.ts';

/** Counts per count-batch entry: keeps a line (and a torn write) small when many codes are hot. */
const COUNTS_PER_ENTRY = 500;
/** Events that make a flush's worth (`record`): a few ms of encoding; fewer made more lines (one per link) of fewer events each. */
export const FLUSH_EVENTS = 16_384;

export class VisitCounts {
  /** Slots visited since the last flush (renumbered by `renumber`). */
  private dirty: number[] = [];
  /**
   * Events recorded since the last flush and not yet written, `PENDING` numbers each, in the
   * order recorded (renumbered by `renumber`). An event written at once (a link with a limit, an
   * import) is written after copies of its link's pending events: the log holds each link's events
   * in the order of their numbers, which replay relies on to skip the ones it has (`link-events.ts`).
   */
  private pending: number[] = [];
  /**
   * The events the flush under way took from `pending`, renumbered and dropped like them; a write of
   * their link at once copies them (should the flush fail, replay would skip them after that write).
   */
  private inflight: number[] = [];
  /**
   * Imported events being written and not yet applied to memory, by code: replay applies an import
   * where its line stands, and a count read before memory applied it would undo it (`untrackedAfterImports`).
   */
  private importing = new Map<string, number>();
  /** Webhooks (`log-webhooks.ts`), told of counted visits and used-up limits; set by the engine. */
  webhooks: LogWebhooks | undefined;

  constructor(
    private readonly records: Keydir,
    private readonly problems: RepeatLog,
    private readonly append: (entries: Entry[] | EncodedLines, chain?: InsertChain) => Promise<void>,
    /** Told when the events waiting for the flush make a flush's worth: flush soon, not in a second. */
    private readonly full: () => void = () => undefined,
  ) {}

  /** No count or event waits to be written: memory holds no visit the log does not. */
  get idle(): boolean {
    return this.dirty.length === 0 && this.pending.length === 0 && this.inflight.length === 0;
  }

  /** Counts one visit of the live slot `s`, without an event (an untracked visit). */
  count(s: number): void {
    if (this.records.visit(s)) this.dirty.push(s);
  }

  /** Counts one visit of the live slot `s` with its event; both are written by the next flush, on one line. */
  record(s: number, event: VisitEvent): void {
    const records = this.records;
    const visitor = event.visitor === null ? 0 : event.visitor >>> 0;
    const referrer = records.events.referrers.numberOf(event.referrer);
    const attrs = packAttrs(event);
    const seq = records.addEvent(s, event.time, visitor, referrer, attrs);
    this.pending.push(s, seq, event.time, visitor, referrer, attrs);
    // A busy second's events written at once would hold the loop for tens of milliseconds: a flush's worth is written as it fills.
    if (this.pending.length === PENDING * FLUSH_EVENTS) this.full();
  }

  /** The packed words of an event; its referrer gets its number now (as `record` does inline). */
  private words(event: VisitEvent): [number, number, number, number] {
    return [event.time, event.visitor === null ? 0 : event.visitor >>> 0, this.records.events.referrers.numberOf(event.referrer), packAttrs(event)];
  }

  /**
   * `record` made durable at once (a link with a visit limit): resolves once the event is on disk.
   * A write that never happened takes the event back, and the visit; an unknown outcome leaves it
   * recorded, and the next flush writes it again (replay keeps one copy).
   */
  recordDurably(s: number, event: VisitEvent): Promise<void> {
    const records = this.records;
    const [time, visitor, referrer, attrs] = this.words(event);
    const seq = records.addEvent(s, time, visitor, referrer, attrs);
    const code = records.code(s);
    const entries = this.pendingEntries(s);
    entries.push(...referrerEntries(this.records.events.referrers, [referrer]), { op: 'X', code, seq, events: Uint32Array.of(time, visitor, referrer, attrs) });
    const told = this.webhooks?.addLimited(entries, records, s, [s, seq, time, visitor, referrer, attrs]);
    return this.append(entries).then(
      () => told?.written(),
      (err: unknown) => {
        const now = records.find(code);
        // Perhaps written: the next flush writes the event again, with its rows as they were (the same ids).
        if (!neverWritten(err)) told?.again(now, seq);
        if (now !== -1) {
          if (neverWritten(err)) records.takeBackEvent(now, time, visitor, referrer, attrs);
          else this.pending.push(now, seq, time, visitor, referrer, attrs);
        }
        throw err;
      },
    );
  }

  /**
   * An imported event of the live slot `s` (docs/analytics.md): written first, then applied to
   * memory (it takes an untracked visit's place, or adds a visit), so a failed write changes nothing.
   * With `chain` (an import's events), refused unwritten once an earlier write of the chain failed.
   */
  importDurably(s: number, event: VisitEvent, chain?: InsertChain): Promise<void> {
    const records = this.records;
    const events = records.events;
    const [time, visitor, referrer, attrs] = this.words(event);
    const seq = events.nextSeq(s);
    events.setNextSeq(s, seq + 1);
    const code = records.code(s);
    const entries = this.pendingEntries(s);
    entries.push(...referrerEntries(this.records.events.referrers, [referrer]), { op: 'Y', code, seq, events: Uint32Array.of(time, visitor, referrer, attrs) });
    this.importing.set(code, (this.importing.get(code) ?? 0) + 1);
    return this.append(entries, chain).then(
      () => {
        this.imported(code);
        const now = records.find(code);
        if (now === -1) return;
        const next = events.nextSeq(now);
        records.importEvent(now, time, visitor, referrer, attrs);
        events.setNextSeq(now, next);
      },
      (err: unknown) => {
        this.imported(code);
        // A count written meanwhile took this import as applied: the next flush writes it as memory has it.
        this.retry(code);
        throw err;
      },
    );
  }

  private imported(code: string): void {
    const left = (this.importing.get(code) ?? 0) - 1;
    if (left > 0) this.importing.set(code, left);
    else this.importing.delete(code);
  }

  /**
   * The untracked visits of slot `s` to write now: what memory will hold once the imports already
   * queued before this write are applied. Each takes an untracked visit's place while there is
   * one, in memory as in replay, and this write lands after their lines.
   */
  untrackedAfterImports(s: number): number {
    const untracked = this.records.untracked(s);
    if (this.importing.size === 0) return untracked;
    return Math.max(0, untracked - (this.importing.get(this.records.code(s)) ?? 0));
  }

  /** Copies of the pending events of slot `s` (those of the flush under way first) as entries, for a write of the slot at once. */
  private pendingEntries(s: number): Entry[] {
    const mine: number[] = [];
    for (const p of [this.inflight, this.pending]) for (let i = 0; i < p.length; i += PENDING) if (p[i] === s) mine.push(...p.slice(i, i + PENDING));
    return eventEntries(this.records, mine);
  }

  /**
   * Counts one visit of the live slot `s` now (the next decision sees it) and resolves once the new
   * count is durable. A failed write rejects (the visit is refused: a 503). If its bytes never
   * reached the file (the write was refused: no space, quota, read-only; `neverWritten`), the
   * visit is given back, so a full disk does not use a limited link up without a redirect. If the
   * outcome is unknown (the fsync failed), the count may be on disk already and the visit stays
   * used: memory never shows fewer visits than a restart could. Either way the count is left to
   * the next flush.
   *
   * Giving back never grants a visit twice: a count written later (another visit's, queued
   * meanwhile) may include this one and reach the disk, but then the disk holds more visits than
   * were granted, never fewer, and the next flush writes the count as it is.
   */
  countDurably(s: number): Promise<void> {
    const records = this.records;
    const count = records.visits(s) + 1;
    records.setVisits(s, count);
    const code = records.code(s);
    const entries = this.carried(s);
    const told = this.webhooks?.addLimited(entries, records, s, undefined);
    return this.append(entries).then(
      () => told?.written(),
      (err: unknown) => {
        const now = records.find(code);
        if (now !== -1 && neverWritten(err) && records.visits(now) > 0) records.setVisits(now, records.visits(now) - 1);
        else if (!neverWritten(err)) told?.again();
        this.retry(code);
        throw err;
      },
    );
  }

  /**
   * Writes the count of the live slot `s` as it is now, at once; resolves once it is durable. A
   * failed write rejects, and the count is left to the next flush.
   */
  write(s: number): Promise<void> {
    const code = this.records.code(s);
    return this.append(this.carried(s)).catch((err: unknown) => {
      this.retry(code);
      throw err;
    });
  }

  /**
   * The entries that make the count of slot `s` durable as it is now: its pending events (copies:
   * the next flush writes them again, and replay keeps one), then its untracked visits.
   */
  carried(s: number): Entry[] {
    return [...this.pendingEntries(s), { op: 'V', counts: [[this.records.code(s), this.untrackedAfterImports(s)]] }];
  }

  /** Leaves the count of `code` to the next flush (by code: slots may have been renumbered meanwhile). */
  private retry(code: string): void {
    const s = this.records.find(code);
    if (s !== -1 && this.records.markDirty(s, true)) this.dirty.push(s);
  }

  /** Follows a vacuum of the keydir: `renumber[old slot]` is the new slot, or -1. */
  renumber(renumber: Int32Array): void {
    this.dirty = this.dirty.map((s) => renumber[s]!).filter((s) => s !== -1);
    this.pending = renumbered(this.pending, renumber);
    this.inflight = renumbered(this.inflight, renumber);
  }

  /** Forgets the pending events of slot `s` (its events were removed). */
  dropPendingOf(s: number): void {
    this.keepPending((events, i) => events[i] !== s);
  }

  /** Forgets the pending events older than `before` (retention made them untracked visits). */
  dropPendingBefore(before: number): void {
    this.keepPending((events, i) => events[i + 2]! >= before);
  }

  /** Keeps the pending events, and those of the flush under way (not written again should it fail), for which `keep` holds. */
  private keepPending(keep: (events: number[], at: number) => boolean): void {
    this.pending = keptEvents(this.pending, keep);
    this.inflight = keptEvents(this.inflight, keep);
  }

  /** The flush whose write is under way, if any (settled: never rejects). */
  private flushing: Promise<void> = Promise.resolve();

  /**
   * Appends the counts of every record visited since the last flush, and the events pending;
   * resolves once every visit counted before the call is durable. It takes them once the flush
   * under way has settled: were that one to fail, its events, written after a later flush's,
   * would come after higher numbers of their links, and replay would skip them.
   */
  flush(): Promise<void> {
    const now = this.flushing.then(() => this.flushNow());
    this.flushing = now.catch(() => undefined);
    return now;
  }

  private async flushNow(): Promise<void> {
    if (this.dirty.length === 0 && this.pending.length === 0 && this.webhooks?.idle !== false) return;
    const records = this.records;
    const counts: [code: string, count: number][] = [];
    for (const s of this.dirty) {
      records.markDirty(s, false);
      // A slot deleted since its visit has no count worth writing.
      if (records.isLive(s)) counts.push([records.code(s), this.untrackedAfterImports(s)]);
    }
    this.dirty = [];
    this.inflight = this.pending;
    this.pending = [];
    const { lines, referrers } = eventLines(this.records, this.inflight);
    const entries: Entry[] = [];
    for (let i = 0; i < counts.length; i += COUNTS_PER_ENTRY) entries.push({ op: 'V', counts: counts.slice(i, i + COUNTS_PER_ENTRY) });
    // The visits' `link.clicked` rows go last, in the same write: read back, their events were too.
    const rows = this.webhooks?.flushRows(entries, records, this.inflight);
    const written = [...referrers, lines, ...entries.map((entry) => ({ bytes: encodeEntry(entry), lines: 1 }))];
    try {
      await this.append({ bytes: Buffer.concat(written.map((w) => w.bytes)), lines: written.reduce((n, w) => n + w.lines, 0) });
      if (rows !== undefined && rows.length > 0) records.webhooks.apply({ op: 'N', rows });
      this.inflight = [];
      for (const r of referrers) records.events.referrers.markWritten(r.n);
    } catch (err) {
      // Keep them dirty; the next flush writes the by then larger counts, and the events again.
      for (const [code] of counts) this.retry(code);
      this.pending = this.inflight.concat(this.pending);
      if (rows !== undefined) this.webhooks?.unsent(rows);
      this.inflight = [];
      this.problems.report('warn', `visits:${errorKind(err)}`, 'could not write visit counts; will retry', { error: (err as Error).message });
      throw err;
    }
  }
}

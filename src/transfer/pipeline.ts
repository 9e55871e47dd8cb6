/**
 * The one import pipeline (docs/api.md, export and import; docs/analytics.md, moving history): rows
 * read from a stream, checked, written in file order, reported by line. The links import
 * (`import.ts`) and the visits import (`visit-transfer.ts`) are two sets of steps over it: what a row
 * is, how it is checked, and how it is handed to the store.
 *
 * Writes are pipelined: up to `WINDOW` rows are written at once, so the store's group commit
 * carries many per fsync instead of one fsync per row, and the next chunk of the body is read only
 * once the window has room, so memory stays bounded however large the file. The log store queues
 * writes in the order they are made, so rows land in file order. The writes of one import are an
 * `InsertChain`: once one fails, the store writes none queued after it, so a failure leaves every
 * row before it stored and none from it on, which is what lets `from_line` resume the import.
 *
 * The work between two writes (reading, parsing and checking rows) is cut into slices of a few
 * milliseconds with a turn of the event loop between them: a file of invalid rows, which never
 * waits for the disk, would otherwise hold the loop, and every redirect, for as long as it lasts.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { StoreUnavailableError, type InsertChain } from '../store/link-store.ts';
import { readRows, type ImportFormat, type RowShape } from './sources.ts';

/** Rows being written at once. */
const WINDOW = 512;
/** Milliseconds of work before the event loop gets a turn (docs/api.md: at most 10). */
const SLICE_MS = 5;
/** Errors listed in a report; the others are only counted in `skipped`. */
export const MAX_REPORTED_ERRORS = 100;

export interface RowError {
  line: number;
  detail: string;
}

export interface ImportReport {
  imported: number;
  skipped: number;
  /** The first `MAX_REPORTED_ERRORS` by line. */
  errors: RowError[];
}

/**
 * The store failed part-way: every row before `line` reported imported is durable, nothing from
 * `line` on was stored, and importing the file again from `line` finishes the job.
 */
export interface ImportFailure extends ImportReport {
  detail: string;
  line: number;
}

export type ImportResult = ({ ok: true } & ImportReport) | ({ ok: false } & ImportFailure);

/** The first `MAX_REPORTED_ERRORS` errors by line, whatever order they are found in. */
export class ErrorList {
  readonly list: RowError[] = [];
  count = 0;
  add(line: number, detail: string): void {
    this.count++;
    const { list } = this;
    if (list.length === MAX_REPORTED_ERRORS && line > list[list.length - 1]!.line) return;
    let at = list.length;
    while (at > 0 && list[at - 1]!.line > line) at--;
    list.splice(at, 0, { line, detail });
    if (list.length > MAX_REPORTED_ERRORS) list.pop();
  }
}

/** What a step may do with a row: count it, refuse it, or hand over a write the store answers later. */
export interface ImportRun {
  /** The import's time, Unix seconds. */
  readonly now: number;
  /** The writes of this import: once one fails, the store writes none after it. */
  readonly chain: InsertChain;
  imported(): void;
  refused(line: number, detail: string): void;
  /**
   * A write the store answers later: `then` gets its answer once every write before it settled, so
   * rows are counted in file order, and may itself write again (a generated code taken meanwhile).
   */
  later<T>(line: number, written: Promise<T>, then: (answer: T) => void): void;
}

/** What one kind of import adds to the pipeline. */
export interface ImportSteps<F extends string, Row extends { ok: true }> {
  /** What the file's rows are. */
  readonly rows: RowShape<F>;
  /** A row checked as its kind requires: the row to write, or why it is refused. */
  check(values: Partial<Record<F, unknown>>, now: number, textual: boolean): Row | { ok: false; detail: string };
  /** Hands a checked row to the store through `run`. Throws only what the store throws. */
  write(row: Row, line: number, run: ImportRun): void;
}

/** A write in flight: its row's line, its answer, and what that answer means. */
interface Pending {
  line: number;
  written: Promise<unknown>;
  answered: (answer: unknown) => void;
}

/** An import under way: the writes in flight, oldest first (at most `WINDOW`), and what it counted. */
class Progress implements ImportRun {
  readonly chain: InsertChain = { failed: undefined };
  readonly errors = new ErrorList();
  /** The first row the store failed to take, and why. */
  failure: { line: number; detail: string } | undefined;
  private count = 0;
  private readonly pending: Pending[] = [];

  constructor(readonly now: number) {}

  imported(): void {
    this.count++;
  }

  refused(line: number, detail: string): void {
    this.errors.add(line, detail);
  }

  later<T>(line: number, written: Promise<T>, then: (answer: T) => void): void {
    // A failed batch rejects every write in it at once, while only the oldest is awaited: the
    // others are marked handled here and read in their turn by `settle`.
    written.catch(() => undefined);
    this.pending.push({ line, written, answered: then as (answer: unknown) => void });
  }

  /** A failure of the store at `line`; anything else thrown is a bug and is thrown on. */
  fail(line: number, err: unknown): void {
    if (!(err instanceof StoreUnavailableError)) throw err;
    if (this.failure === undefined || line < this.failure.line) this.failure = { line, detail: err.message };
  }

  /** Writes in flight. */
  get inFlight(): number {
    return this.pending.length;
  }

  /** Waits for the oldest write in flight. */
  async settle(): Promise<void> {
    const p = this.pending.shift()!;
    let answer: unknown;
    try {
      answer = await p.written;
    } catch (err) {
      return this.fail(p.line, err);
    }
    if (this.failure !== undefined && p.line > this.failure.line) return;
    try {
      p.answered(answer);
    } catch (err) {
      this.fail(p.line, err);
    }
  }

  result(): ImportResult {
    const report = { imported: this.count, skipped: this.errors.count, errors: this.errors.list };
    return this.failure === undefined ? { ok: true, ...report } : { ok: false, ...report, ...this.failure };
  }
}

/**
 * Imports the rows of `body` that start on line `fromLine` or later (those before it are read but
 * neither checked nor reported: an import resumed after a failure). Resolves once every stored row
 * is durable. A failure of the store (`StoreUnavailableError`) stops reading at once: the answer
 * names the first row that was not stored, and the chain of writes makes sure that no row after it
 * was stored either. Anything else thrown is a bug and rejects.
 */
export async function runImport<F extends string, Row extends { ok: true }>(
  body: AsyncIterable<Buffer | string>,
  format: ImportFormat,
  steps: ImportSteps<F, Row>,
  nowMs: number,
  fromLine: number,
): Promise<ImportResult> {
  const run = new Progress(Math.floor(nowMs / 1000));
  const rows = readRows(body, format, steps.rows);
  let sliceStart = performance.now();
  try {
    read: for await (const batch of rows) {
      for (const row of batch) {
        if (performance.now() - sliceStart >= SLICE_MS) {
          await nextTurn();
          sliceStart = performance.now();
        }
        if (row.line < fromLine) continue;
        const checked = 'error' in row ? { ok: false as const, detail: row.error } : steps.check(row.values, run.now, row.textual);
        if (!checked.ok) {
          run.refused(row.line, checked.detail);
          continue;
        }
        try {
          steps.write(checked as Row, row.line, run);
        } catch (err) {
          run.fail(row.line, err);
        }
        while (run.failure === undefined && run.inFlight >= WINDOW) await run.settle();
        if (run.failure !== undefined) break read;
      }
    }
  } finally {
    // Every write handed to the store is waited for, whatever stopped the loop: the answer is sent
    // only when what it reports is durable.
    while (run.inFlight > 0) await run.settle();
    if (run.failure !== undefined) await rows.return(undefined);
  }
  return run.result();
}

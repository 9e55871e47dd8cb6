/**
 * The import pipeline (docs/api.md, export and import): rows read from a stream, checked like
 * creates, stored in file order, reported by line. Shared by `POST /api/import` and the offline
 * `url-shortener import` command.
 *
 * Inserts are pipelined: up to `WINDOW` rows are written at once, so the store's group commit
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
import { candidateCodes } from '../links/codes.ts';
import { StoreUnavailableError, type InsertChain, type LinkRecord, type LinkStore } from '../store/link-store.ts';
import { checkRow, type RowRules } from './row.ts';
import { LINK_ROWS, readRows, type ImportFormat } from './sources.ts';

/** Rows being written at once. */
const WINDOW = 512;
/** Milliseconds of work before the event loop gets a turn (docs/api.md: at most 10). */
const SLICE_MS = 5;
/** Errors listed in a report; the others are only counted in `skipped`. */
export const MAX_REPORTED_ERRORS = 100;

export interface ImportDeps {
  store: LinkStore;
  rules: RowRules;
  /** Milliseconds since the epoch. */
  now: () => number;
  randomCode: (length: number) => string;
}

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

/**
 * `from_line` (`--from-line`) as given: the line to resume from, an integer of 1 or more; undefined
 * when it is not one.
 */
export function parseFromLine(text: string): number | undefined {
  if (!/^[1-9]\d{0,14}$/.test(text)) return undefined;
  return Number(text);
}

/** A write in flight: its row's line, and whether the store took it. */
interface Pending {
  line: number;
  written: Promise<boolean>;
  /** The code was generated: a refusal means try another, not "taken". */
  generated: LinkRecord | undefined;
}

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

const TAKEN = 'code already in use';

/**
 * Imports the rows of `body` that start on line `fromLine` or later (those before it are read but
 * neither checked nor reported: an import resumed after a failure). Resolves once every stored row
 * is durable. A failure of the store (`StoreUnavailableError`) stops reading at once: the answer
 * names the first row that was not stored, and the chain of writes makes sure that no row after it
 * was stored either. Anything else thrown is a bug and rejects.
 */
export async function importLinks(body: AsyncIterable<Buffer | string>, format: ImportFormat, deps: ImportDeps, fromLine = 1): Promise<ImportResult> {
  const { store, rules } = deps;
  const now = Math.floor(deps.now() / 1000);
  const errors = new ErrorList();
  /** Writes in flight, oldest first: at most `WINDOW`. */
  const pending: Pending[] = [];
  const chain: InsertChain = { failed: undefined };
  let imported = 0;
  let failure: { line: number; detail: string } | undefined;
  let sliceStart = performance.now();

  const fail = (line: number, err: unknown): void => {
    if (!(err instanceof StoreUnavailableError)) throw err;
    if (failure === undefined || line < failure.line) failure = { line, detail: err.message };
  };

  /** Offers generated codes until the store takes one (or takes it in), or reports the code space exhausted. */
  function placeGenerated(record: Omit<LinkRecord, 'code'>, line: number): void {
    for (const code of candidateCodes(deps.randomCode, rules.minShortLength, rules.maxShortLength, rules.reserved)) {
      const taken = store.insert({ ...record, code }, now, chain);
      if (taken === false) continue;
      if (taken === true) return void imported++;
      track(line, taken, { ...record, code });
      return;
    }
    errors.add(line, `no free short code up to ${rules.maxShortLength} characters; raise MAX_SHORT_LENGTH`);
  }

  function track(line: number, written: Promise<boolean>, generated: LinkRecord | undefined): void {
    // A failed batch rejects every write in it at once, while only the oldest is awaited: the
    // others are marked handled here and read in their turn by `settle`.
    written.catch(() => undefined);
    pending.push({ line, written, generated });
  }

  /** Waits for the oldest write in flight. */
  async function settle(): Promise<void> {
    const p = pending.shift()!;
    let stored: boolean;
    try {
      stored = await p.written;
    } catch (err) {
      return fail(p.line, err);
    }
    if (failure !== undefined && p.line > failure.line) return;
    if (stored) imported++;
    else if (p.generated === undefined) errors.add(p.line, TAKEN);
    else {
      // Only a store answering with promises refuses a generated code this late (a database, where
      // another instance took it meanwhile): this one row then lands after those written since.
      try {
        const { code: _, ...record } = p.generated;
        placeGenerated(record, p.line);
      } catch (err) {
        fail(p.line, err);
      }
    }
  }

  const rows = readRows(body, format, LINK_ROWS);
  try {
    for await (const batch of rows) {
      for (const row of batch) {
        if (performance.now() - sliceStart >= SLICE_MS) {
          await nextTurn();
          sliceStart = performance.now();
        }
        if (row.line < fromLine) continue;
        if ('error' in row) {
          errors.add(row.line, row.error);
          continue;
        }
        const checked = checkRow(row.values, rules, now, row.textual);
        if (!checked.ok) {
          errors.add(row.line, checked.detail);
          continue;
        }
        try {
          if (checked.code === undefined) placeGenerated(checked.record, row.line);
          else {
            const taken = store.insert({ ...checked.record, code: checked.code }, now, chain);
            if (taken === false) errors.add(row.line, TAKEN);
            else if (taken === true) imported++;
            else track(row.line, taken, undefined);
          }
        } catch (err) {
          fail(row.line, err);
        }
        if (failure !== undefined) break;
        while (pending.length >= WINDOW) await settle();
        if (failure !== undefined) break;
      }
      if (failure !== undefined) break;
    }
  } finally {
    // Every write handed to the store is waited for, whatever stopped the loop: the answer is sent
    // only when what it reports is durable.
    while (pending.length > 0) await settle();
    if (failure !== undefined) await rows.return(undefined);
  }
  const report = { imported, skipped: errors.count, errors: errors.list };
  return failure === undefined ? { ok: true, ...report } : { ok: false, ...report, ...failure };
}

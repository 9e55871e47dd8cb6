/**
 * Moving visit history (docs/analytics.md, moving history): the visits export as text pieces and
 * the visits import pipeline, shared by `GET /api/visits/export`, `POST /api/visits/import` and
 * the offline `export-visits` and `import-visits` commands. The links go first (`import.ts`); their
 * imported `visit_count`s are untracked visits, which each imported event turns into an event.
 *
 * The import follows the links import's rules (`import.ts`): rows in file order, up to `WINDOW`
 * events written at once (the log store carries them in shared group commits), one `InsertChain`
 * so that nothing past a failure is written, the report by line, the work between two writes cut
 * into slices of a few milliseconds.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { isCodeShaped } from '../links/codes.ts';
import { StoreUnavailableError, type InsertChain, type LinkStore } from '../store/link-store.ts';
import type { CodedEvent, EventFilter, ImportedVisit } from '../visits/event.ts';
import { parseEventFilter, RangeRefusal } from '../visits/range.ts';
import { csvRow } from './csv.ts';
import { EXPORT_FORMATS, type ExportFormat } from './export.ts';
import { ErrorList, type ImportResult } from './import.ts';
import { readRows, type ImportFormat } from './sources.ts';
import { checkVisitRow, VISIT_COLUMNS, VISIT_ROWS, visitCsvLine, visitJsonLine } from './visit-rows.ts';

/** Characters per piece, as the links export (`export.ts`). */
const PIECE_CHARS = 64 * 1024;
/** Events being written at once. */
const WINDOW = 512;
/** Milliseconds of work before the event loop gets a turn. */
const SLICE_MS = 5;

/** The visits export of `events` as text pieces: the CSV header first, then one line per event. */
export async function* visitExportText(events: AsyncIterable<CodedEvent>, format: ExportFormat): AsyncGenerator<string> {
  const line = format === 'csv' ? visitCsvLine : visitJsonLine;
  let piece = format === 'csv' ? csvRow(VISIT_COLUMNS) : '';
  for await (const event of events) {
    piece += line(event);
    if (piece.length >= PIECE_CHARS) {
      yield piece;
      piece = '';
    }
  }
  if (piece !== '') yield piece;
}

/** `visits-YYYY-MM-DD.<ext>` of the UTC day of `nowMs`. */
export function visitExportFileName(format: ExportFormat, nowMs: number): string {
  return `visits-${new Date(nowMs).toISOString().slice(0, 10)}.${EXPORT_FORMATS[format].extension}`;
}

/** The events a visits export holds: a range, a bot filter, and one link's alone when `code` is given. */
export type VisitExportFilter = EventFilter & { readonly code?: string | undefined };

/** The export's filter as a query or a command line gives it: text, or null when absent. */
export interface VisitExportParams {
  readonly code?: string | null | undefined;
  readonly from?: string | null | undefined;
  readonly to?: string | null | undefined;
  readonly bots?: string | null | undefined;
}

/**
 * The filter of a visits export: `code` (one link), `from`/`to` (Unix seconds or ISO 8601, read as
 * the stats read them; a time without an offset is UTC), `bots` (default `include`: an export
 * moves history, bots included). The sentence naming the bad parameter when one is bad.
 */
export function parseVisitExportFilter(params: VisitExportParams): VisitExportFilter | string {
  const code = params.code ?? undefined;
  if (code !== undefined && !isCodeShaped(code)) return 'code must be a short code: 1 to 64 characters of A-Z a-z 0-9 - _';
  const filter = parseEventFilter({ from: params.from ?? undefined, to: params.to ?? undefined, bots: params.bots ?? 'include' });
  if (filter instanceof RangeRefusal) return filter.detail;
  return { ...filter, code };
}

export interface VisitImportDeps {
  store: LinkStore;
  /** Milliseconds since the epoch. */
  now: () => number;
}

/** The detail of a row whose code has no live link. */
export const UNKNOWN_CODE = 'no live link has this short_code (import the links first)';

/**
 * Imports the events of `body` that start on line `fromLine` or later, each through
 * `store.importVisit`. Resolves once every recorded event is durable. A failure of the store
 * (`StoreUnavailableError`) stops reading at once; the answer names the first row not recorded,
 * and the chain makes sure no row after it was. Anything else thrown is a bug and rejects.
 */
export async function importVisits(body: AsyncIterable<Buffer | string>, format: ImportFormat, deps: VisitImportDeps, fromLine = 1): Promise<ImportResult> {
  const { store } = deps;
  const now = Math.floor(deps.now() / 1000);
  const errors = new ErrorList();
  /** Writes in flight, oldest first: at most `WINDOW`. */
  const pending: { line: number; done: Promise<ImportedVisit> }[] = [];
  const chain: InsertChain = { failed: undefined };
  let imported = 0;
  let failure: { line: number; detail: string } | undefined;
  let sliceStart = performance.now();

  const fail = (line: number, err: unknown): void => {
    if (!(err instanceof StoreUnavailableError)) throw err;
    if (failure === undefined || line < failure.line) failure = { line, detail: err.message };
  };
  const count = (line: number, outcome: ImportedVisit): void => {
    if (outcome === 'imported') imported++;
    else errors.add(line, UNKNOWN_CODE);
  };

  async function settle(): Promise<void> {
    const p = pending.shift()!;
    let outcome: ImportedVisit;
    try {
      outcome = await p.done;
    } catch (err) {
      return fail(p.line, err);
    }
    if (failure !== undefined && p.line > failure.line) return;
    count(p.line, outcome);
  }

  const rows = readRows(body, format, VISIT_ROWS);
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
        const checked = checkVisitRow(row.values, now, row.textual);
        if (!checked.ok) {
          errors.add(row.line, checked.detail);
          continue;
        }
        try {
          const outcome = store.importVisit(checked.code, checked.event, now, chain);
          if (outcome instanceof Promise) {
            // A failed batch rejects every write in it at once, while only the oldest is awaited.
            outcome.catch(() => undefined);
            pending.push({ line: row.line, done: outcome });
          } else count(row.line, outcome);
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
    // The answer is sent only when what it reports is durable.
    while (pending.length > 0) await settle();
    if (failure !== undefined) await rows.return(undefined);
  }
  const report = { imported, skipped: errors.count, errors: errors.list };
  return failure === undefined ? { ok: true, ...report } : { ok: false, ...report, ...failure };
}

/**
 * Moving visit history (docs/analytics.md, moving history): the visits export as text pieces and
 * the visits import pipeline, shared by `GET /api/visits/export`, `POST /api/visits/import` and
 * the offline `export-visits` and `import-visits` commands. The links go first (`import.ts`); their
 * imported `visit_count`s are untracked visits, which each imported event turns into an event.
 *
 * The import is the links import's pipeline (`pipeline.ts`) with the steps of an event.
 */
import { storeKey, type Domains } from '../links/domains.ts';
import { Refusal } from '../links/refusal.ts';
import { isCodeShaped } from '../links/codes.ts';
import type { LinkStore } from '../store/link-store.ts';
import type { CodedEvent, ImportedVisit, VisitExportFilter } from '../visits/event.ts';
import { parseEventFilter, RangeRefusal } from '../visits/range.ts';
import { csvRow } from './csv.ts';
import { EXPORT_FORMATS, type ExportFormat } from './export.ts';
import { runImport, type ImportResult, type ImportRun, type ImportSteps } from './pipeline.ts';
import type { ImportFormat } from './sources.ts';
import { checkVisitRow, VISIT_COLUMNS, VISIT_ROWS, visitCsvLine, visitJsonLine, type CheckedVisit, type VisitField } from './visit-rows.ts';

/** Characters per piece, as the links export (`export.ts`). */
const PIECE_CHARS = 64 * 1024;

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

export type { VisitExportFilter } from '../visits/event.ts';

/** The export's filter as a query or a command line gives it: text, or null when absent. */
export interface VisitExportParams {
  readonly code?: string | null | undefined;
  /** The domain of `code` (a host of the instance; absent: the default one). */
  readonly domain?: string | null | undefined;
  readonly from?: string | null | undefined;
  readonly to?: string | null | undefined;
  readonly bots?: string | null | undefined;
}

/**
 * The filter of a visits export: `code` (one link), `from`/`to` (Unix seconds or ISO 8601, read as
 * the stats read them; a time without an offset is UTC), `bots` (default `include`: an export
 * moves history, bots included). The sentence naming the bad parameter when one is bad.
 */
export function parseVisitExportFilter(params: VisitExportParams, domains?: Domains): VisitExportFilter | string {
  const code = params.code ?? undefined;
  if (code !== undefined && !isCodeShaped(code)) return 'code must be a short code: 1 to 64 characters of A-Z a-z 0-9 - _';
  const domain = domains === undefined ? null : domains.named(params.domain);
  if (domain instanceof Refusal) return domain.detail;
  const filter = parseEventFilter({ from: params.from ?? undefined, to: params.to ?? undefined, bots: params.bots ?? 'include' });
  if (filter instanceof RangeRefusal) return filter.detail;
  // The store's key of the code on its domain (links/domains.ts).
  return { ...filter, code: code === undefined ? code : storeKey(code, domain) };
}

export interface VisitImportDeps {
  store: LinkStore;
  /** The instance's domains, which a row's `domain` names (a host it does not serve: the default one). */
  rules?: { domains?: Domains | undefined } | undefined;
  /** Milliseconds since the epoch. */
  now: () => number;
}

/** The detail of a row whose code has no live link. */
export const UNKNOWN_CODE = 'no live link has this short_code (import the links first)';

type VisitRow = Extract<CheckedVisit, { ok: true }>;

/** The visits' steps of the pipeline: each event recorded through `store.importVisit`. */
function visitSteps({ store, rules }: VisitImportDeps): ImportSteps<VisitField, VisitRow> {
  const keyOf = (code: string, domain: unknown): string => {
    const named = rules?.domains?.named(domain) ?? null;
    return storeKey(code, named instanceof Refusal ? null : named);
  };
  const counted = (line: number, outcome: ImportedVisit, run: ImportRun): void => (outcome === 'imported' ? run.imported() : run.refused(line, UNKNOWN_CODE));
  return {
    rows: VISIT_ROWS,
    check: checkVisitRow,
    write(row, line, run) {
      const outcome = store.importVisit(keyOf(row.code, row.domain), row.event, run.now, run.chain);
      if (outcome instanceof Promise) run.later(line, outcome, (later) => counted(line, later, run));
      else counted(line, outcome, run);
    },
  };
}

/**
 * Imports the events of `body` that start on line `fromLine` or later, each through
 * `store.importVisit`, by the links import's pipeline (`pipeline.ts`): rows in file order, up to a
 * window of events written at once (the log store carries them in shared group commits), one
 * `InsertChain` so that nothing past a failure is written, the report by line. Resolves once every
 * recorded event is durable. Anything but a failure of the store thrown is a bug and rejects.
 */
export function importVisits(body: AsyncIterable<Buffer | string>, format: ImportFormat, deps: VisitImportDeps, fromLine = 1): Promise<ImportResult> {
  return runImport(body, format, visitSteps(deps), deps.now(), fromLine);
}

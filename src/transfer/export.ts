/**
 * The export (docs/api.md, export and import): every live record, oldest first, as JSON Lines or
 * as CSV, in pieces of about 64 KiB read from the store's export as they are needed. Nothing holds
 * more than one piece: memory stays flat with a million links. Shared by `GET /api/export` and the
 * offline `url-shortener export` command.
 */
import type { Domains } from '../links/domains.ts';
import { recordView, type UrlRecord } from '../links/record.ts';
import type { LinkRecord } from '../store/link-store.ts';
import { csvRow } from './csv.ts';

export type ExportFormat = 'jsonl' | 'csv';

/**
 * A piece of an export's text, or the promise of one still being read from the store. Whoever
 * writes the pieces takes this shape (the HTTP pacer, `http/pacer.ts`, takes exactly it), so the
 * export knows nothing of HTTP.
 */
export type ExportPiece = string | Promise<string>;

/** Media types and file extensions by format. */
export const EXPORT_FORMATS: Readonly<Record<ExportFormat, { type: string; extension: string }>> = {
  jsonl: { type: 'application/x-ndjson', extension: 'jsonl' },
  csv: { type: 'text/csv', extension: 'csv' },
};

/**
 * The CSV columns, in order: the record's fields without `expires_at`, which follows from them.
 * `title`, `tags`, `author`, `domain` and then the routing came later and are appended, so a reader
 * that takes columns by position still finds the older ones where they were; `tags` is one cell,
 * the tags joined with commas (a tag never holds one); `author` is empty for none, and `domain`
 * for the default one. The routing columns are those of the record, except that `password_hash`
 * replaces `password_protected`: a move must keep the protection, and only the hash can carry it.
 */
export const CSV_COLUMNS = [
  'short_code',
  'short_url',
  'original_url',
  'created_at',
  'visit_count',
  'retention_days',
  'max_visits',
  'title',
  'tags',
  'author',
  'domain',
  'rules',
  'forward_query',
  'valid_since',
  'valid_until',
  'fallback_url',
  'password_hash',
] as const;

/** Characters per piece: big enough to cost few writes, small enough to stay a young string. */
const PIECE_CHARS = 64 * 1024;

/** An instant's cell: Unix seconds, empty for none. */
const instantCell = (seconds: number | null): string => (seconds === null ? '' : String(seconds));

function csvLine(r: UrlRecord, passwordHash: string | undefined): string {
  return csvRow([
    r.short_code,
    r.short_url,
    r.original_url,
    String(r.created_at),
    String(r.visit_count),
    String(r.retention_days),
    r.max_visits === null ? '' : String(r.max_visits),
    r.title ?? '',
    r.tags.join(','),
    r.author ?? '',
    r.domain ?? '',
    // Compact JSON, as the import reads it back; it starts with `[`, never a formula.
    r.rules.length === 0 ? '' : JSON.stringify(r.rules),
    String(r.forward_query),
    instantCell(r.valid_since),
    instantCell(r.valid_until),
    r.fallback_url ?? '',
    passwordHash ?? '',
  ]);
}

/**
 * The record as `GET /api/urls/<code>` shows it, plus `password_hash` on a password-protected link
 * only: a line of a link without one is exactly its record.
 */
function jsonLine(r: UrlRecord, passwordHash: string | undefined): string {
  return `${JSON.stringify(passwordHash === undefined ? r : { ...r, password_hash: passwordHash })}\n`;
}

/** The export of `records` as text pieces: the CSV header first, then one line per record. */
export async function* exportText(records: AsyncIterable<LinkRecord>, format: ExportFormat, domains: Domains): AsyncGenerator<string> {
  const line = format === 'csv' ? csvLine : jsonLine;
  let piece = format === 'csv' ? csvRow(CSV_COLUMNS) : '';
  for await (const rec of records) {
    piece += line(recordView(rec, domains), rec.routing?.passwordHash);
    if (piece.length >= PIECE_CHARS) {
      yield piece;
      piece = '';
    }
  }
  if (piece !== '') yield piece;
}

/**
 * The pieces of an async source as the pacer (`http/pacer.ts`) takes them: `first`, the source's
 * first result, read before the answer's head went out (so a store that cannot be read is still a
 * status of its own, not a connection cut after a 200), then each a promise of the next piece. The
 * pacer asks for the next only once the previous one was written, by which time the end of the
 * source is known.
 */
export function* pacedPieces(source: AsyncIterator<string>, first: IteratorResult<string>): Generator<ExportPiece, void, undefined> {
  if (first.done) return;
  yield first.value;
  let done = false;
  while (!done) {
    yield source.next().then((r) => {
      if (r.done) done = true;
      return r.done ? '' : r.value;
    });
  }
}

/** `urls-YYYY-MM-DD.<ext>` of the UTC day of `nowMs`. */
export function exportFileName(format: ExportFormat, nowMs: number): string {
  return `urls-${new Date(nowMs).toISOString().slice(0, 10)}.${EXPORT_FORMATS[format].extension}`;
}

/**
 * An import's body, as rows: bytes (UTF-8, chunks cut anywhere) → lines or CSV rows → the values
 * of each row by field, each with its line in the file. Chunk by chunk, so memory holds one chunk
 * and one row at most, whatever the size of the file.
 */
import { StringDecoder } from 'node:string_decoder';
import { columnsOf, fieldOf, type Field } from './columns.ts';
import { CsvReader } from './csv.ts';

/**
 * The longest JSON Lines line, in bytes of UTF-8 as sent, its line ending (LF or CRLF) not counted:
 * a longer one is reported instead of held, so no line can exhaust memory.
 */
export const MAX_LINE_BYTES = 1_048_576;
/** Rows in one batch at most: the importer looks at the clock between batches (see `import.ts`). */
const BATCH_ROWS = 1024;

export type ImportFormat = 'jsonl' | 'csv';

/** A row of the file: its values, or why it could not be read. `textual`: CSV text, not JSON values. */
export type SourceRow<F extends string = Field> = { line: number; values: Partial<Record<F, unknown>>; textual: boolean } | { line: number; error: string };

/**
 * What the rows of a file are: the field a CSV header name or a JSON key stands for, and the
 * columns of a header row (or why it cannot be read). Links (`columns.ts`) and visit events
 * (`visit-rows.ts`) are two tables over the one reader.
 */
export interface RowShape<F extends string> {
  fieldOf(name: string): F | undefined;
  columnsOf(header: readonly string[]): Partial<Record<F, number>> | string;
}

/** The rows of a links import. */
export const LINK_ROWS: RowShape<Field> = { fieldOf, columnsOf };

/** The file cannot be imported at all (a CSV without a readable header naming the url column): a 400. */
export class ImportInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImportInputError';
  }
}

/** The rows of `body` as `shape` reads them, a batch per chunk read. */
export function readRows<F extends string>(body: AsyncIterable<Buffer | string>, format: ImportFormat, shape: RowShape<F>): AsyncGenerator<SourceRow<F>[]> {
  return format === 'csv' ? csvRows(body, shape) : jsonRows(body, shape);
}

async function* texts(body: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  // A multi-byte character cut between two chunks is held back until its last byte arrives.
  const decoder = new StringDecoder('utf8');
  for await (const chunk of body) yield typeof chunk === 'string' ? chunk : decoder.write(chunk);
  yield decoder.end();
}

async function* csvRows<F extends string>(body: AsyncIterable<Buffer | string>, shape: RowShape<F>): AsyncGenerator<SourceRow<F>[]> {
  const reader = new CsvReader();
  let columns: Partial<Record<F, number>> | undefined;
  let width = 0;
  const convert = (rows: ReturnType<CsvReader['push']>): SourceRow<F>[] => {
    const out: SourceRow<F>[] = [];
    for (const row of rows) {
      if (columns === undefined) {
        // The header decides what every other row means: one that cannot be read is the file's
        // problem, not a row's (taking the next row as the header would misread them all).
        if (row.error !== undefined) throw new ImportInputError(`line ${row.line}: the header row cannot be read: ${row.error}`);
        const found = shape.columnsOf(row.fields);
        if (typeof found === 'string') throw new ImportInputError(`line ${row.line}: ${found}`);
        columns = found;
        width = row.fields.length;
        continue;
      }
      if (row.error !== undefined) {
        out.push({ line: row.line, error: row.error });
        continue;
      }
      if (row.fields.length !== width) {
        out.push({ line: row.line, error: `the row has ${row.fields.length} fields, the header has ${width}` });
        continue;
      }
      const values: Partial<Record<F, unknown>> = {};
      for (const [field, at] of Object.entries(columns) as [F, number][]) values[field] = row.fields[at];
      out.push({ line: row.line, values, textual: true });
    }
    return out;
  };
  for await (const text of texts(body)) {
    const rows = convert(reader.push(text));
    if (rows.length > 0) yield rows;
  }
  const last = convert(reader.end());
  if (columns === undefined) throw new ImportInputError('the file has no header row: a CSV import starts with one naming its columns');
  if (last.length > 0) yield last;
}

const LF = 0x0a;
const CR = 0x0d;
/** The UTF-8 byte order mark some editors write first: not part of the first line. */
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * JSON Lines are cut at LF bytes, which never occur inside a multi-byte UTF-8 character, so a
 * line's length is counted in the bytes sent and each line is decoded on its own.
 */
async function* jsonRows<F extends string>(body: AsyncIterable<Buffer | string>, shape: RowShape<F>): AsyncGenerator<SourceRow<F>[]> {
  /** The start of the current line, from earlier chunks. */
  let held: Buffer[] = [];
  let heldBytes = 0;
  let line = 0;
  /** The current line passed the limit: the rest of it is dropped, and it is reported. */
  let overlong = false;
  for await (const piece of body) {
    const chunk = typeof piece === 'string' ? Buffer.from(piece) : piece;
    let out: SourceRow<F>[] = [];
    let from = 0;
    for (let nl = chunk.indexOf(LF); nl !== -1; nl = chunk.indexOf(LF, from)) {
      line++;
      const row = overlong
        ? tooLong(line)
        : held.length === 0
          ? jsonRow(shape, line, chunk, from, nl)
          : jsonRow(shape, line, Buffer.concat([...held, chunk.subarray(from, nl)]), 0, undefined);
      if (row !== undefined) out.push(row);
      held = [];
      heldBytes = 0;
      overlong = false;
      from = nl + 1;
      if (out.length === BATCH_ROWS) {
        yield out;
        out = [];
      }
    }
    if (!overlong && from < chunk.length) {
      heldBytes += chunk.length - from;
      // Room for a byte order mark and the CR of a CRLF, which the exact count leaves out.
      if (heldBytes > MAX_LINE_BYTES + BOM.length + 1) {
        overlong = true;
        held = [];
      } else held.push(from === 0 ? chunk : chunk.subarray(from));
    }
    if (out.length > 0) yield out;
  }
  if (held.length > 0 || overlong) {
    const row = overlong ? tooLong(line + 1) : jsonRow(shape, line + 1, Buffer.concat(held), 0, undefined);
    if (row !== undefined) yield [row];
  }
}

const tooLong = (line: number): { line: number; error: string } => ({ line, error: `the line is longer than ${MAX_LINE_BYTES} bytes` });

/** The row of the line in `bytes` from `start` to `end` (undefined: to the end); undefined for a blank line. */
function jsonRow<F extends string>(shape: RowShape<F>, line: number, bytes: Buffer, start: number, end: number | undefined): SourceRow<F> | undefined {
  let stop = end ?? bytes.length;
  if (line === 1 && bytes.subarray(start, start + BOM.length).equals(BOM)) start += BOM.length;
  if (stop > start && bytes[stop - 1] === CR) stop--;
  if (stop - start > MAX_LINE_BYTES) return tooLong(line);
  const text = bytes.toString('utf8', start, stop);
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { line, error: 'not valid JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { line, error: 'a line must hold a JSON object' };
  const values: Partial<Record<F, unknown>> = {};
  /** The key each field was read from: two keys for one field are refused, as two CSV columns are. */
  const keys: Partial<Record<F, string>> = {};
  for (const [key, v] of Object.entries(value)) {
    const field = shape.fieldOf(key);
    if (field === undefined) continue;
    const earlier = keys[field];
    if (earlier !== undefined) return { line, error: `the record names the ${field} field twice ("${earlier}" and "${key}")` };
    keys[field] = key;
    values[field] = v;
  }
  return { line, values, textual: false };
}

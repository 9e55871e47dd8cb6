/**
 * An import's body, as rows: bytes (UTF-8, chunks cut anywhere) → lines or CSV rows → the values
 * of each row by field, each with its line in the file. Chunk by chunk, so memory holds one chunk
 * and one row at most, whatever the size of the file.
 */
import { StringDecoder } from 'node:string_decoder';
import { columnsOf, fieldOf, type Columns, type Field } from './columns.ts';
import { CsvReader, MAX_ROW_CHARS } from './csv.ts';
import type { RowValues } from './row.ts';

export type ImportFormat = 'jsonl' | 'csv';

/** A row of the file: its values, or why it could not be read. `textual`: CSV text, not JSON values. */
export type SourceRow = { line: number; values: RowValues; textual: boolean } | { line: number; error: string };

/** The file cannot be imported at all (a CSV without a header naming the url column): a 400. */
export class ImportInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImportInputError';
  }
}

/** The rows of `body`, a batch per chunk read. */
export function readRows(body: AsyncIterable<Buffer | string>, format: ImportFormat): AsyncGenerator<SourceRow[]> {
  return format === 'csv' ? csvRows(body) : jsonRows(body);
}

async function* texts(body: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  // A multi-byte character cut between two chunks is held back until its last byte arrives.
  const decoder = new StringDecoder('utf8');
  for await (const chunk of body) yield typeof chunk === 'string' ? chunk : decoder.write(chunk);
  yield decoder.end();
}

async function* csvRows(body: AsyncIterable<Buffer | string>): AsyncGenerator<SourceRow[]> {
  const reader = new CsvReader();
  let columns: Columns | undefined;
  let width = 0;
  const convert = (rows: ReturnType<CsvReader['push']>): SourceRow[] => {
    const out: SourceRow[] = [];
    for (const row of rows) {
      if (row.error !== undefined) {
        out.push({ line: row.line, error: row.error });
        continue;
      }
      if (columns === undefined) {
        const found = columnsOf(row.fields);
        if (typeof found === 'string') throw new ImportInputError(`line ${row.line}: ${found}`);
        columns = found;
        width = row.fields.length;
        continue;
      }
      if (row.fields.length !== width) {
        out.push({ line: row.line, error: `the row has ${row.fields.length} fields, the header has ${width}` });
        continue;
      }
      const values: RowValues = {};
      for (const [field, at] of Object.entries(columns) as [Field, number][]) values[field] = row.fields[at];
      out.push({ line: row.line, values, textual: true });
    }
    return out;
  };
  for await (const text of texts(body)) {
    const rows = convert(reader.push(text));
    if (rows.length > 0) yield rows;
  }
  const last = convert(reader.end());
  if (last.length > 0) yield last;
}

async function* jsonRows(body: AsyncIterable<Buffer | string>): AsyncGenerator<SourceRow[]> {
  let partial = '';
  let line = 0;
  /** The current line passed the row limit: the rest of it is dropped, and it is reported. */
  let overlong = false;
  let first = true;
  for await (let text of texts(body)) {
    if (first && text.length > 0) {
      first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    const out: SourceRow[] = [];
    let from = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', from)) {
      line++;
      const whole = overlong ? '' : partial + text.slice(from, nl);
      out.push(...jsonRow(line, whole, overlong));
      partial = '';
      overlong = false;
      from = nl + 1;
    }
    if (!overlong) {
      partial += text.slice(from);
      if (partial.length > MAX_ROW_CHARS) {
        overlong = true;
        partial = '';
      }
    }
    if (out.length > 0) yield out;
  }
  if (partial !== '' || overlong) {
    const last = jsonRow(line + 1, partial, overlong);
    if (last.length > 0) yield last;
  }
}

function jsonRow(line: number, raw: string, overlong: boolean): SourceRow[] {
  if (overlong) return [{ line, error: `the line is longer than ${MAX_ROW_CHARS} characters` }];
  const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
  if (text.trim() === '') return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [{ line, error: 'not valid JSON' }];
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [{ line, error: 'a line must hold a JSON object' }];
  const values: RowValues = {};
  for (const [key, v] of Object.entries(value)) {
    const field = fieldOf(key);
    if (field !== undefined && values[field] === undefined) values[field] = v;
  }
  return [{ line, values, textual: false }];
}

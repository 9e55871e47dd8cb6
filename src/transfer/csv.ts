/**
 * CSV (RFC 4180) both ways, for export and import (docs/api.md, export and import).
 *
 * Reading is a streaming state machine: text arrives in chunks cut anywhere (inside a quoted
 * field, between the CR and the LF of a line break, in a doubled quote), and rows come out as soon
 * as they are complete, each with the physical line it starts on, so a malformed row is reported
 * where an editor shows it. Memory is bounded by the longest row, and a row is never allowed to
 * grow past `maxRowChars`: it is reported, not held.
 *
 * Both ways also keep a spreadsheet from running a cell as a formula (`escapeFormula`): the writer
 * prefixes such a cell with `'`, and the reader takes that `'` off again, so what one writes the
 * other reads back unchanged.
 */

/** A row: its fields, the line it starts on (1-based), or why it is not usable. */
export interface CsvRow {
  line: number;
  fields: string[];
  /** Set when the row is malformed: `fields` is then meaningless. */
  error?: string;
}

const QUOTE = 0x22;
const APOSTROPHE = 0x27;
const COMMA = 0x2c;
const CR = 0x0d;
const LF = 0x0a;
const BOM = 0xfeff;

/** Where the reader is: between fields, in a plain field, in a quoted one, just after a quote in one. */
const State = {
  FieldStart: 0,
  Plain: 1,
  Quoted: 2,
  QuoteInQuoted: 3,
  /** After the closing quote, before the comma or line break that must follow. */
  AfterQuoted: 4,
} as const;
type State = (typeof State)[keyof typeof State];

/** A row longer than this (in characters) is reported instead of held: no row can exhaust memory. */
export const MAX_ROW_CHARS = 1 << 20;

export class CsvReader {
  private state: State = State.FieldStart;
  private field = '';
  private fields: string[] = [];
  private rowChars = 0;
  private error: string | undefined;
  /** A CR outside quotes, waiting for the next character: a CRLF ends the row, a lone CR is data. */
  private pendingCr = false;
  private line = 1;
  private rowLine = 1;
  private started = false;
  private rows: CsvRow[] = [];

  constructor(private readonly maxRowChars = MAX_ROW_CHARS) {}

  /** Feeds the next piece of text; returns the rows it completed. */
  push(text: string): CsvRow[] {
    let i = 0;
    if (!this.started && text.length > 0) {
      this.started = true;
      // Spreadsheets write a UTF-8 byte order mark; it is not part of the first header name.
      if (text.charCodeAt(0) === BOM) i = 1;
    }
    for (; i < text.length; i++) this.char(text.charCodeAt(i), text, i);
    const rows = this.rows;
    this.rows = [];
    return rows;
  }

  /** The end of the input: the last row, even without a final line break. */
  end(): CsvRow[] {
    if (this.pendingCr) {
      this.pendingCr = false;
      this.endRow();
    } else if (this.state === State.Quoted) {
      this.error ??= `a quoted field opened on line ${this.rowLine} is never closed`;
      this.endRow();
    } else if (this.state !== State.FieldStart || this.fields.length > 0) {
      this.endRow();
    }
    const rows = this.rows;
    this.rows = [];
    return rows;
  }

  private char(c: number, text: string, i: number): void {
    if (this.pendingCr) {
      this.pendingCr = false;
      if (c === LF) {
        this.line++;
        this.endRow();
        return;
      }
      if (this.state === State.AfterQuoted) this.error ??= 'a quoted field must be followed by a comma or the end of the line';
      else this.append('\r');
    }
    switch (this.state) {
      case State.FieldStart:
        if (c === QUOTE) {
          this.state = State.Quoted;
          return;
        }
        this.state = State.Plain;
        return this.plain(c, text, i);
      case State.Plain:
        return this.plain(c, text, i);
      case State.Quoted:
        if (c === QUOTE) this.state = State.QuoteInQuoted;
        else {
          if (c === LF) this.line++;
          this.append(text[i]!);
        }
        return;
      case State.QuoteInQuoted:
        if (c === QUOTE) {
          // A doubled quote is one quote character.
          this.append('"');
          this.state = State.Quoted;
          return;
        }
        this.state = State.AfterQuoted;
        return this.afterQuoted(c);
      case State.AfterQuoted:
        return this.afterQuoted(c);
    }
  }

  /** A comma or a line end after a field, plain or quoted, taken; false for any other character. */
  private separator(c: number): boolean {
    if (c === COMMA) this.endField();
    else if (c === LF) {
      this.line++;
      this.endRow();
    } else if (c === CR) this.pendingCr = true;
    else return false;
    return true;
  }

  private plain(c: number, text: string, i: number): void {
    if (this.separator(c)) return;
    // A quote inside an unquoted field is kept as data, as spreadsheets read it.
    this.append(text[i]!);
  }

  private afterQuoted(c: number): void {
    if (this.separator(c)) return;
    this.error ??= 'a quoted field must be followed by a comma or the end of the line';
  }

  private append(s: string): void {
    this.rowChars += s.length;
    if (this.rowChars > this.maxRowChars) {
      this.error ??= `the row is longer than ${this.maxRowChars} characters`;
      return;
    }
    if (this.error === undefined) this.field += s;
  }

  private endField(): void {
    this.fields.push(unescapeFormula(this.field));
    this.field = '';
    this.state = State.FieldStart;
  }

  private endRow(): void {
    this.fields.push(unescapeFormula(this.field));
    const fields = this.fields;
    // An empty line is no row (a trailing blank line, a spacer between blocks).
    if (!(fields.length === 1 && fields[0] === '' && this.error === undefined && this.state !== State.AfterQuoted)) {
      this.rows.push(this.error === undefined ? { line: this.rowLine, fields } : { line: this.rowLine, fields: [], error: this.error });
    }
    this.field = '';
    this.fields = [];
    this.rowChars = 0;
    this.error = undefined;
    this.state = State.FieldStart;
    this.rowLine = this.line;
  }
}

/**
 * Characters that force a field into quotes (RFC 4180 2.6); other fields are written bare. A
 * semicolon or a tab is quoted too: a spreadsheet set to split on one of them (Excel does on `;`
 * in many locales) would otherwise cut `a;=1+1` into two cells, the second a formula.
 */
const NEEDS_QUOTES = /[",;\t\r\n]/;

/** One field as RFC 4180 writes it, its formula escaped: quoted (quotes doubled) only when needed. */
export function csvField(value: string): string {
  const cell = escapeFormula(value);
  return NEEDS_QUOTES.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell;
}

/** One row with its CRLF line break (RFC 4180 2.1). */
export function csvRow(values: readonly string[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}

/**
 * A spreadsheet opening a CSV runs a cell that starts with `=`, `+`, `-` or `@` as a formula, and
 * some skip a leading tab or carriage return first (OWASP, CSV injection). Titles, tags and codes
 * are set by whoever may create a link, so an export must not hand them to a spreadsheet as
 * formulas: such a cell is written with a `'` in front, which makes it text. To read every value
 * back unchanged the rule must be undone exactly, so a value that already starts with `'`s and
 * then one of those characters gets one `'` more (`'=x` is written `''=x`), and the reader takes
 * one `'` off exactly those cells. Every other cell is written and read as it is.
 */
export function escapeFormula(value: string): string {
  return formulaAfterApostrophes(value, 0) ? `'${value}` : value;
}

/** The value of a cell `escapeFormula` wrote; a cell it cannot have written (`=1+1`) is taken as it is. */
export function unescapeFormula(cell: string): string {
  return cell.charCodeAt(0) === APOSTROPHE && formulaAfterApostrophes(cell, 1) ? cell.slice(1) : cell;
}

/** Whether `text`, from `from` on, is any number of `'` and then a character that starts a formula. */
function formulaAfterApostrophes(text: string, from: number): boolean {
  let i = from;
  while (text.charCodeAt(i) === APOSTROPHE) i++;
  switch (text.charCodeAt(i)) {
    case 0x3d: // =
    case 0x2b: // +
    case 0x2d: // -
    case 0x40: // @
    case 0x09: // tab
    case CR:
      return true;
    default:
      return false;
  }
}

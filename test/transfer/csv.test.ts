/**
 * The CSV reader and writer on their own: quotes, doubled quotes, CRLF, newlines inside quotes, a
 * byte order mark, line numbers, and input cut into chunks at every possible place.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { CsvReader, csvField, csvRow, type CsvRow } from '../../src/transfer/csv.ts';

function readAll(chunks: readonly string[], max?: number): CsvRow[] {
  const reader = new CsvReader(max);
  const rows: CsvRow[] = [];
  for (const c of chunks) rows.push(...reader.push(c));
  rows.push(...reader.end());
  return rows;
}

const CASES: { name: string; text: string; rows: CsvRow[] }[] = [
  {
    name: 'plain LF',
    text: 'a,b\nc,d\n',
    rows: [
      { line: 1, fields: ['a', 'b'] },
      { line: 2, fields: ['c', 'd'] },
    ],
  },
  {
    name: 'CRLF, no final line break',
    text: 'a,b\r\nc,d',
    rows: [
      { line: 1, fields: ['a', 'b'] },
      { line: 2, fields: ['c', 'd'] },
    ],
  },
  { name: 'quoted comma and doubled quote', text: '"a,1","say ""hi"""\n', rows: [{ line: 1, fields: ['a,1', 'say "hi"'] }] },
  {
    name: 'newlines inside quotes, CRLF kept',
    text: '"l1\r\nl2\nl3",x\nnext,y\n',
    rows: [
      { line: 1, fields: ['l1\r\nl2\nl3', 'x'] },
      { line: 4, fields: ['next', 'y'] },
    ],
  },
  { name: 'byte order mark', text: '\ufeffurl,code\r\n', rows: [{ line: 1, fields: ['url', 'code'] }] },
  {
    name: 'empty fields and an empty quoted field',
    text: ',,\n"",x\n""\n',
    rows: [
      { line: 1, fields: ['', '', ''] },
      { line: 2, fields: ['', 'x'] },
      { line: 3, fields: [''] },
    ],
  },
  {
    name: 'blank lines are no rows but count',
    text: 'a\n\n\r\nb\n',
    rows: [
      { line: 1, fields: ['a'] },
      { line: 4, fields: ['b'] },
    ],
  },
  { name: 'a lone CR is data', text: 'a\rb,c\n', rows: [{ line: 1, fields: ['a\rb', 'c'] }] },
  { name: 'a quote inside a plain field is data', text: 'a"b,c\n', rows: [{ line: 1, fields: ['a"b', 'c'] }] },
  {
    name: 'text after a closing quote',
    text: '"a"b,c\nd\n',
    rows: [
      { line: 1, fields: [], error: 'a quoted field must be followed by a comma or the end of the line' },
      { line: 2, fields: ['d'] },
    ],
  },
  {
    name: 'a CR after a closing quote, then text',
    text: '"a"\rb\nd\n',
    rows: [
      { line: 1, fields: [], error: 'a quoted field must be followed by a comma or the end of the line' },
      { line: 2, fields: ['d'] },
    ],
  },
  {
    name: 'an unclosed quote at the end',
    text: 'a\n"b,c\nd',
    rows: [
      { line: 1, fields: ['a'] },
      { line: 2, fields: [], error: 'a quoted field opened on line 2 is never closed' },
    ],
  },
  { name: 'CR at the very end', text: 'a,b\r', rows: [{ line: 1, fields: ['a', 'b'] }] },
];

test('rows, fields and the line each row starts on', () => {
  for (const c of CASES) assert.deepEqual(readAll([c.text]), c.rows, c.name);
});

test('the same rows whatever the chunk boundaries (every single cut, then random cuts)', () => {
  for (const c of CASES) {
    for (let i = 0; i <= c.text.length; i++) assert.deepEqual(readAll([c.text.slice(0, i), c.text.slice(i)]), c.rows, `${c.name}, cut at ${i}`);
    assert.deepEqual(readAll([...c.text]), c.rows, `${c.name}, one character per chunk`);
  }
  const field = fc.string({ unit: fc.constantFrom('a', 'b', ',', '"', '\r', '\n', 'é', ' '), maxLength: 8 });
  const table = fc.array(fc.array(field, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 6 });
  fc.assert(
    fc.property(table, fc.array(fc.nat(), { maxLength: 8 }), fc.boolean(), (rows, cuts, crlf) => {
      // Fields written by csvField (quoted when needed), rows ended by CRLF or LF; a row of one
      // empty field would be a blank line, so it is written quoted.
      const end = crlf ? '\r\n' : '\n';
      const text = rows.map((r) => (r.length === 1 && r[0] === '' ? '""' : r.map(csvField).join(',')) + end).join('');
      const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
      const chunks = [0, ...points].map((p, i, all) => text.slice(p, all[i + 1] ?? text.length));
      const got = readAll(chunks);
      assert.deepEqual(
        got.map((r) => r.fields),
        rows,
      );
      assert.equal(
        got.every((r) => r.error === undefined),
        true,
      );
    }),
    { numRuns: 2000 },
  );
});

test('line numbers count the line breaks inside quoted fields', () => {
  const text = 'h\r\n"a\r\nb"\r\n"c\nd\ne"\r\nz\r\n';
  assert.deepEqual(
    readAll([text]).map((r) => r.line),
    [1, 2, 4, 7],
  );
});

test('a row past the row limit is reported, not held; the next row is read', () => {
  const rows = readAll([`x,"${'a'.repeat(50)}\n${'b'.repeat(50)}"\nok,1\n`], 40);
  assert.deepEqual(rows, [
    { line: 1, fields: [], error: 'the row is longer than 40 characters' },
    { line: 3, fields: ['ok', '1'] },
  ]);
});

test('the writer quotes only when needed, doubling quotes, and ends rows with CRLF', () => {
  assert.equal(csvField('plain'), 'plain');
  assert.equal(csvField('https://example.com/?a=1&b=2'), 'https://example.com/?a=1&b=2');
  assert.equal(csvField('a,b'), '"a,b"');
  assert.equal(csvField('say "hi"'), '"say ""hi"""');
  assert.equal(csvField('two\nlines'), '"two\nlines"');
  assert.equal(csvField('cr\r'), '"cr\r"');
  assert.equal(csvRow(['a', 'b,c', '']), 'a,"b,c",\r\n');
});

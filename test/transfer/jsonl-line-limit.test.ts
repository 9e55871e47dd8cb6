/**
 * The JSON Lines line limit is 1,048,576 bytes of UTF-8 as sent, the line ending not counted
 * (docs/api.md, export and import): exactly that many bytes is a row, one more is reported, and a
 * line of multi-byte characters is measured in bytes, not characters. The body arrives in chunks
 * cut anywhere, inside a character and inside a CRLF too.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LinkRecord, LinkStore } from '../../src/store/link-store.ts';
import { importLinks } from '../../src/transfer/import.ts';
import { MAX_LINE_BYTES } from '../../src/transfer/sources.ts';

const RULES = { baseUrl: 'https://s.example', maxLength: 8192, minShortLength: 6, maxShortLength: 12 };
const LIMIT = 1_048_576;

/** A record of exactly `bytes` bytes of UTF-8, padded in an ignored column with "€" (3 bytes) and ASCII. */
function lineOf(bytes: number, url: string): string {
  const head = JSON.stringify({ url, note: '' }).slice(0, -2);
  const room = bytes - Buffer.byteLength(head) - 2;
  const euros = Math.floor(room / 3);
  const line = `${head}${'€'.repeat(euros)}${'a'.repeat(room - euros * 3)}"}`;
  assert.equal(Buffer.byteLength(line), bytes);
  return line;
}

async function* chunks(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

test('a line of exactly 1,048,576 bytes is a row, with LF or CRLF; one byte more, or fewer characters of more bytes, is reported', async () => {
  assert.equal(MAX_LINE_BYTES, LIMIT);
  const body = Buffer.from(
    [
      `${lineOf(LIMIT, 'https://example.com/exact')}\n`, // 1
      `${lineOf(LIMIT + 1, 'https://example.com/over')}\n`, // 2
      `${lineOf(LIMIT, 'https://example.com/exact-crlf')}\r\n`, // 3
      // 400,000 characters, 1,200,000 bytes: under the limit only if characters were counted.
      `${JSON.stringify({ url: 'https://example.com/euros', note: '€'.repeat(400_000) })}\n`, // 4
      '{"url":"https://example.com/after"}\n', // 5
      lineOf(LIMIT + 1, 'https://example.com/last-over'), // 6, without a final line break
    ].join(''),
  );
  // Chunks that cut "€" apart in many places; 786,433 bytes (a quarter of the offset of line 3's
  // LF) also cuts its CRLF in two.
  for (const size of [65536, 1000, 786_433]) {
    const stored: LinkRecord[] = [];
    const store = { insert: (rec: LinkRecord) => (stored.push(rec), true) } as unknown as LinkStore;
    const result = await importLinks(chunks(body, size), 'jsonl', {
      store,
      rules: RULES,
      now: () => 1714564800_000,
      randomCode: () => `c${stored.length}xxxxx`,
    });
    const over = 'the line is longer than 1048576 bytes';
    assert.deepEqual(result, { ok: true, imported: 3, skipped: 3, errors: [2, 4, 6].map((line) => ({ line, detail: over })) }, `chunks of ${size}`);
    assert.deepEqual(
      stored.map((r) => r.url),
      ['https://example.com/exact', 'https://example.com/exact-crlf', 'https://example.com/after'],
      `chunks of ${size}`,
    );
  }
});

test('a byte order mark before the first line is not part of it', async () => {
  const stored: LinkRecord[] = [];
  const store = { insert: (rec: LinkRecord) => (stored.push(rec), true) } as unknown as LinkStore;
  const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`${lineOf(LIMIT, 'https://example.com/bom')}\r\n{"url":"https://example.com/2"}`)]);
  // The mark itself cut in pieces: one byte, one byte, then the rest.
  async function* pieces(): AsyncGenerator<Buffer> {
    yield body.subarray(0, 1);
    yield body.subarray(1, 2);
    yield* chunks(body.subarray(2), 65536);
  }
  const result = await importLinks(pieces(), 'jsonl', { store, rules: RULES, now: () => 1714564800_000, randomCode: () => `c${stored.length}xxxxx` });
  assert.deepEqual(result, { ok: true, imported: 2, skipped: 0, errors: [] });
  assert.deepEqual(
    stored.map((r) => r.url),
    ['https://example.com/bom', 'https://example.com/2'],
  );
});

/**
 * A file of invalid rows costs the server little and never holds it (docs/api.md, export and
 * import): a row error is a plain value, not an exception with a stack, and the import gives the
 * event loop a turn between slices of its work, so other requests are answered meanwhile.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkCustomCode, checkMaxVisits, checkRetention, checkUrl, Refusal } from '../../src/links/validate.ts';
import { RESERVED_SEGMENTS } from '../../src/links/codes.ts';
import { checkCreate } from '../../src/links/shorten.ts';
import type { LinkStore } from '../../src/store/link-store.ts';
import { importLinks } from '../../src/transfer/import.ts';
import { checkRow } from '../../src/transfer/row.ts';

const RULES = { baseUrl: 'https://s.example', maxLength: 8192, minShortLength: 6, maxShortLength: 12 };
const NOW = 1714564800;

async function* chunks(text: string, size: number): AsyncGenerator<Buffer> {
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

test('an import of invalid rows gives the event loop turns while it runs', async () => {
  const rows = 300_000;
  // Nothing to write, and the body already in memory: without slices, nothing else would run
  // until the last row was checked.
  let turns = 0;
  let importing = true;
  const turn = (): void => {
    turns++;
    if (importing) setImmediate(turn);
  };
  setImmediate(turn);
  const store = { insert: () => assert.fail('no row is valid') } as unknown as LinkStore;
  const result = await importLinks(chunks('{}\n'.repeat(rows), 65536), 'jsonl', { store, rules: RULES, now: () => NOW * 1000, randomCode: () => 'unused' });
  const during = turns;
  importing = false;
  assert.ok(during > 0, 'the event loop turned while the import ran');
  assert.equal(result.ok, true);
  assert.equal(result.imported, 0);
  assert.equal(result.skipped, rows);
  assert.deepEqual(
    result.errors,
    Array.from({ length: 100 }, (_, i) => ({ line: i + 1, detail: 'url is required' })),
  );
});

test('a row error is a plain value: the rules an import shares with a create return a Refusal, without a stack', () => {
  const refusals = [
    checkUrl(undefined, RULES),
    checkUrl('not a url', RULES),
    checkUrl('ftp://example.com/', RULES),
    checkCustomCode('no spaces', 6, 12),
    checkRetention(-1),
    checkMaxVisits(0),
  ];
  for (const r of refusals) {
    assert.ok(r instanceof Refusal, String(r));
    assert.ok(!(r instanceof Error));
    assert.equal('stack' in r, false);
  }
  assert.deepEqual(
    refusals.map((r) => (r as Refusal).detail),
    [
      'url is required',
      'url must be an absolute URL such as https://example.com/page',
      'url must use http or https, not ftp',
      'code may only use the letters A-Z and a-z, digits, "-" and "_"',
      'retention_days must be an integer from 0 to 36500 (0 keeps the link forever)',
      'max_visits must be an integer from 1 to 2147483647, or null for no limit',
    ],
  );
  assert.deepEqual(checkRow({}, RULES, NOW, false), { ok: false, detail: 'url is required' });
  assert.deepEqual(checkRow({ url: 'https://example.com/', created: 'yesterday' }, RULES, NOW, true), {
    ok: false,
    detail: 'created_at must be Unix seconds, an ISO 8601 time, or YYYY-MM-DD HH:MM:SS (UTC)',
  });
  // One set of rules: a create gets the same refusal as a row.
  const create = (input: { url: unknown; retentionDays?: unknown }) => checkCreate(input, RULES, { ...RULES, reserved: RESERVED_SEGMENTS });
  assert.deepEqual(create({ url: 'not a url' }), new Refusal('url must be an absolute URL such as https://example.com/page'));
  assert.deepEqual(create({ url: 'https://example.com/', retentionDays: -1 }), refusals[4]);
});

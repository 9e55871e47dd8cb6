/**
 * The pure pieces of YOURLS' API (docs/compat.md#yourls-api), without a socket: the encoders'
 * escaping (PHP's json_encode, the XML converter's text), the status a result gives, the stats
 * selector against a plain sort, PHP's intval, the multipart reader on broken bodies, and the
 * credential check.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import type { UrlRecord } from '../../src/links/record.ts';
import { multipartBoundary, multipartFields } from '../../src/http/multipart.ts';
import { NONCE_LIFE, signatureKey } from '../../src/peers/yourls/auth.ts';
import { phpJson, phpXml, render, statusOf, xmlText } from '../../src/peers/yourls/output.ts';
import { phpInt } from '../../src/peers/yourls/params.ts';
import { keywordOf, trimLong } from '../../src/peers/yourls/shapes.ts';
import { selector, statsFilter } from '../../src/peers/yourls/stats.ts';
import { readXml } from '../support/xml.ts';
import { NO_ROUTING } from '../support/no-routing.ts';

test('json as PHP writes it: slashes and every non-ASCII character escaped, control characters as JSON escapes them', () => {
  assert.equal(
    phpJson({ u: 'é/😀', c: '\u0001\n\t"\\', d: "\u007f<>&'", n: 3, z: null }),
    '{"u":"\\u00e9\\/\\ud83d\\ude00","c":"\\u0001\\n\\t\\"\\\\","d":"\u007f<>&\'","n":3,"z":null}',
  );
  assert.deepEqual(JSON.parse(phpJson({ u: 'é/😀 \u2028' })), { u: 'é/😀 \u2028' });
});

test('xml text: &, <, > and CR escaped, the control characters YOURLS drops dropped (tab too), quotes and line feeds kept', () => {
  assert.equal(xmlText('a & b < c > d "e" \'f\'\r\n\tg\u0001h\u007fi é'), 'a &amp; b &lt; c &gt; d "e" \'f\'&#13;\nghi é');
  const doc = phpXml({ title: 'x < y & z\r\n', empty: '', none: null, nested: { a: 1, inner: {} } });
  assert.equal(
    doc,
    '<?xml version="1.0" encoding="UTF-8"?>\n<root><title>x &lt; y &amp; z&#13;\n</title><empty/><none/><nested><a>1</a><inner/></nested></root>\n',
  );
  assert.deepEqual(readXml(doc), [
    'root',
    [
      ['title', 'x < y & z\r\n'],
      ['empty', ''],
      ['none', ''],
      [
        'nested',
        [
          ['a', '1'],
          ['inner', ''],
        ],
      ],
    ],
  ]);
});

test('the status of a result: statusCode, else errorCode, else 200; any unknown format is the simple line', () => {
  assert.equal(statusOf({ errorCode: '', statusCode: '200' }), 200);
  assert.equal(statusOf({ errorCode: '404' }), 404);
  assert.equal(statusOf({ version: '1' }), 200);
  assert.deepEqual(render('csv', { fields: { errorCode: '400' }, simple: 'line' }), { status: 400, type: 'text/plain; charset=utf-8', body: 'line' });
  assert.deepEqual(render('simple', { fields: {} }), { status: 200, type: 'text/plain; charset=utf-8', body: '' });
});

test('trimLong counts characters, not UTF-16 units; keywordOf takes a code or a whole short URL', () => {
  assert.equal(trimLong('é'.repeat(60)), 'é'.repeat(60));
  assert.equal(trimLong('😀'.repeat(61)), `${'😀'.repeat(55)}[...]`);
  assert.equal(keywordOf('https://s.example/x/abc123', 'https://s.example/x'), 'abc123');
  assert.equal(keywordOf(' abc123 ', 'https://s.example/x'), 'abc123');
  assert.equal(keywordOf('https://other.example/abc123', 'https://s.example/x'), 'https://other.example/abc123');
});

test("phpInt reads as PHP's intval", () => {
  const rows: [string | undefined, number][] = [
    [undefined, 0],
    ['', 0],
    ['12', 12],
    [' 12abc', 12],
    ['+3', 3],
    ['-4', -4],
    ['abc', 0],
    ['1.9', 1],
    ['\t\n7', 7],
    ['0x1A', 0],
    ['99999999999999999999', Number.MAX_SAFE_INTEGER],
  ];
  for (const [raw, expected] of rows) assert.equal(phpInt(raw), expected, String(raw));
});

function record(code: string, visits: number): UrlRecord {
  return {
    short_code: code,
    domain: null,
    short_url: `https://s.example/${code}`,
    original_url: `https://example.com/${code}`,
    created_at: 0,
    visit_count: visits,
    untracked_visits: 0,
    retention_days: 0,
    max_visits: null,
    expires_at: null,
    title: null,
    tags: [],
    author: null,
    ...NO_ROUTING,
  };
}

test('the top and bottom selectors pick what a stable sort of the whole list would, for any start and limit', () => {
  let seed = 7;
  const next = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const list = Array.from({ length: 300 }, (_, i) => record(`c${i}`, Math.floor(next() * 12)));
  for (const filter of ['top', 'bottom'] as const) {
    const sorted = [...list].sort((a, b) => (filter === 'top' ? b.visit_count - a.visit_count : a.visit_count - b.visit_count));
    for (const [start, limit] of [
      [0, 10],
      [5, 20],
      [0, 300],
      [290, 50],
      [400, 5],
      [0, 0],
      [3, -1],
    ] as const) {
      const pick = selector(filter, start, limit);
      for (const r of list) pick.add(r);
      const expected = limit > 0 ? sorted.slice(start, start + limit) : [];
      assert.deepEqual(
        pick.picked().map((r) => r.short_code),
        expected.map((r) => r.short_code),
        `${filter} ${start} ${limit}`,
      );
    }
  }
  assert.deepEqual(['top', 'bottom', 'last', 'rand', 'random', 'Top', undefined, 'toString'].map(statsFilter), [
    'top',
    'bottom',
    'last',
    'rand',
    'rand',
    'top',
    'top',
    'top',
  ]);
});

test('the rand selector returns distinct links, each with the same chance', () => {
  const list = Array.from({ length: 10 }, (_, i) => record(`c${i}`, 0));
  const seen = new Map<string, number>();
  for (let round = 0; round < 2000; round++) {
    const pick = selector('rand', 1, 3);
    for (const r of list) pick.add(r);
    const codes = pick.picked().map((r) => r.short_code);
    assert.equal(codes.length, 3);
    assert.equal(new Set(codes).size, 3);
    for (const c of codes) seen.set(c, (seen.get(c) ?? 0) + 1);
  }
  // 6000 picks over 10 links: 600 each expected; a biased sampler (never the first or last) fails this.
  for (const r of list) assert.ok(Math.abs((seen.get(r.short_code) ?? 0) - 600) < 150, `${r.short_code}: ${seen.get(r.short_code)}`);
});

test('multipart: fields in order, the last of a name winning; files skipped; a broken body gives what was read', () => {
  const b = 'XyZ';
  const part = (name: string, value: string, extra = '') => `--${b}\r\nContent-Disposition: form-data; name="${name}"${extra}\r\n\r\n${value}\r\n`;
  const whole = `${part('a', '1') + part('b', 'two\r\nlines') + part('a', '3') + part('f', 'file', '; filename="f.txt"')}--${b}--\r\n`;
  assert.deepEqual(
    [...multipartFields(Buffer.from(whole), b)],
    [
      ['a', '3'],
      ['b', 'two\r\nlines'],
    ],
  );
  // Cut in the middle of the second part: the first is kept.
  assert.deepEqual([...multipartFields(Buffer.from(whole.slice(0, whole.indexOf('two') + 2)), b)], [['a', '1']]);
  assert.deepEqual([...multipartFields(Buffer.from('no delimiter here'), b)], []);
  assert.deepEqual([...multipartFields(Buffer.from(`--${b}\r\nContent-Type: text/plain\r\n\r\nno name\r\n--${b}--`), b)], []);
  assert.deepEqual([...multipartFields(Buffer.from(`--${b}\r\nContent-Disposition: form-data; name=plain\r\n\r\nv\r\n--${b}--`), b)], [['plain', 'v']]);
  assert.deepEqual([...multipartFields(Buffer.from(part('na%22me', 'ü')), b)], []);
  assert.deepEqual([...multipartFields(Buffer.from(`${part('na%22me', 'ü')}--${b}--`), b)], [['na"me', 'ü']]);
  assert.equal(multipartBoundary('multipart/form-data; boundary=abc'), 'abc');
  assert.equal(multipartBoundary('multipart/form-data; charset=utf-8; BOUNDARY="a b"'), 'a b');
  assert.equal(multipartBoundary('multipart/form-data'), undefined);
});

test('signatureKey: the key itself, or the API_KEYS key whose timestamped hash it is (either way round, within the nonce life); compared with every key', () => {
  const keys = ['k1', 'k2'];
  const now = 2_000_000_000;
  const p = (o: Record<string, string>) => new Map(Object.entries(o));
  const md5 = (s: string) => createHash('md5').update(s).digest('hex');
  // A plain signature is the key as sent, for the service to recognize: a stored key too.
  assert.equal(signatureKey(p({ signature: 'k2' }), keys, now), 'k2');
  assert.equal(signatureKey(p({ signature: 'us_stored' }), keys, now), 'us_stored');
  assert.equal(signatureKey(p({ timestamp: String(now), signature: md5(`${now}k2`) }), keys, now), 'k2');
  assert.equal(signatureKey(p({ timestamp: String(now), signature: md5(`k1${now}`) }), keys, now), 'k1');
  assert.equal(signatureKey(p({ timestamp: `${now}`, signature: md5(`${now}k1`) }), keys, now + NONCE_LIFE - 1), 'k1');
  assert.equal(signatureKey(p({ timestamp: `${now}`, signature: md5(`${now}k1`) }), keys, now + NONCE_LIFE), undefined);
  // PHP's (int) of the timestamp, while the hash is of the text as sent.
  assert.equal(signatureKey(p({ timestamp: `${now}x`, signature: md5(`${now}xk1`) }), keys, now), 'k1');
  // A hash of a key no API_KEYS holds (a stored key's secret, which the store never keeps) signs nothing.
  assert.equal(signatureKey(p({ timestamp: String(now), signature: md5(`${now}us_stored`) }), keys, now), undefined);
  assert.equal(signatureKey(p({ timestamp: String(now), signature: md5(`${now}k1`) }), [], now), undefined);
  assert.equal(signatureKey(p({ timestamp: String(now), signature: md5(`${now}k1`), hash: 'crc32' }), keys, now), undefined);
  assert.equal(signatureKey(p({ timestamp: '', signature: 'k1' }), keys, now), undefined);
  assert.equal(signatureKey(p({ signature: '0' }), ['0'], now), undefined);
});

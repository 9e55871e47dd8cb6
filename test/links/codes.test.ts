/**
 * Short codes (docs/api.md, short codes): the alphabet, the uniform generator, the
 * grow-after-ten-collisions rule, reserved words, and the 503 when the code space is exhausted.
 */
import assert from 'node:assert/strict';
import { randomFillSync } from 'node:crypto';
import { test } from 'node:test';
import {
  ALPHABET,
  RESERVED_SEGMENTS,
  isReserved,
  TRIES_PER_LENGTH,
  createCodeSource,
  cryptoRandom,
  isCodeShaped,
  candidateCodes,
  reservedWords,
  type RandomSource,
} from '../../src/links/codes.ts';
import type { UrlList } from '../../src/links/record.ts';
import { start, type Harness } from '../support/helpers.ts';

/** The code the service stores: the first candidate the store does not refuse as taken. */
function pickCode(randomCode: (length: number) => string, taken: (code: string) => boolean, min: number, max: number): string | undefined {
  for (const code of candidateCodes(randomCode, min, max)) if (!taken(code)) return code;
  return undefined;
}

const DOCUMENTED_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** A random source that hands out the given pools one call at a time (then zeros), counting calls. */
function scripted(pools: readonly (readonly number[])[]): RandomSource & { calls: number } {
  const source = Object.assign(
    (buffer: Uint8Array): void => {
      const pool = pools[source.calls] ?? [];
      source.calls++;
      buffer.fill(0);
      buffer.set(pool.slice(0, buffer.length));
    },
    { calls: 0 },
  );
  return source;
}

/**
 * Pearson's chi-square statistic of `text` against the uniform distribution over the alphabet.
 * With 57 degrees of freedom its mean is 57 and its standard deviation about 10.7.
 */
function chiSquare(text: string): number {
  const counts = new Map<string, number>();
  for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  const expected = text.length / ALPHABET.length;
  let chi = 0;
  for (const ch of ALPHABET) chi += ((counts.get(ch) ?? 0) - expected) ** 2 / expected;
  return chi;
}

// P(chi2 with 57 df > 150) is below 1e-9: a fair generator never trips it. A generator that maps
// `byte % 58` without rejection gives the first 24 letters 5/256 and the rest 4/256; over 58,000
// characters that is a statistic near 720, far above the bound (checked below, not assumed).
const CHI_BOUND = 150;
const SAMPLE = 58_000;

test('the alphabet is exactly the 58 characters of docs/api.md, without 0 O I l', () => {
  assert.equal(ALPHABET, DOCUMENTED_ALPHABET);
  assert.equal(ALPHABET.length, 58);
  assert.equal(new Set(ALPHABET).size, 58);
  for (const confusable of ['0', 'O', 'I', 'l']) assert.ok(!ALPHABET.includes(confusable), confusable);
});

test('createCodeSource yields only alphabet characters, of exactly the requested length', () => {
  const randomCode = createCodeSource();
  for (const length of [1, 2, 6, 12, 64]) {
    for (let i = 0; i < 50; i++) {
      const code = randomCode(length);
      assert.equal(code.length, length);
      for (const ch of code) assert.ok(ALPHABET.includes(ch), `${JSON.stringify(ch)} in ${code}`);
    }
  }
});

test('rejection sampling: bytes of 232 and above are skipped, the rest map to ALPHABET[byte % 58]', () => {
  // 232 → skip, 0 → '1', 255 → skip, 57 → 'z', 231 → 231 % 58 = 57 → 'z', 58 → 0 → '1',
  // 233 → skip, 1 → '2', 116 → 0 → '1', 174 → 0 → '1', 250 → skip, 59 → 1 → '2'
  const random = scripted([[232, 0, 255, 57, 231, 58, 233, 1, 116, 174, 250, 59]]);
  const randomCode = createCodeSource(random);
  assert.equal(randomCode(5), '1zz12');
  assert.equal(randomCode(3), '112');
  assert.equal(random.calls, 1, 'one pooled read serves several codes');
});

test('rejection sampling continues across a refill of the pool', () => {
  // The first pool is all rejected bytes but its last one; the code finishes from the second pool.
  const first = Array.from({ length: 1024 }, () => 240);
  first[1023] = 5;
  const second = [255, 232, 7];
  const random = scripted([first, second]);
  const randomCode = createCodeSource(random);
  assert.equal(randomCode(2), `${ALPHABET[5]}${ALPHABET[7]}`);
  assert.equal(random.calls, 2);
});

test('every accepted byte value maps to each letter exactly four times', () => {
  // One pool holding every byte 0..255 four times: 4 × 232 = 928 accepted bytes, 16 per letter.
  const pool = Array.from({ length: 1024 }, (_, i) => i % 256);
  const randomCode = createCodeSource(scripted([pool]));
  const text = randomCode(928);
  const counts = new Map<string, number>();
  for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  assert.equal(counts.size, 58);
  for (const ch of ALPHABET) assert.equal(counts.get(ch), 16, ch);
});

test('the chi-square bound separates a fair generator from a modulo-biased one', () => {
  // First show the bound has teeth: `byte % 58` without rejection, on the same crypto bytes.
  const bytes = new Uint8Array(SAMPLE);
  randomFillSync(bytes);
  let biased = '';
  for (const b of bytes) biased += ALPHABET[b % ALPHABET.length];
  const biasedChi = chiSquare(biased);
  assert.ok(biasedChi > CHI_BOUND * 2, `a modulo-biased generator scores ${biasedChi.toFixed(1)}`);

  const fair = createCodeSource(cryptoRandom)(SAMPLE);
  const fairChi = chiSquare(fair);
  assert.ok(fairChi < CHI_BOUND, `the code generator scores ${fairChi.toFixed(1)}, bound ${CHI_BOUND}`);
});

test('pickCode tries ten times at one length, then moves to the next length', () => {
  assert.equal(TRIES_PER_LENGTH, 10);
  const asked: number[] = [];
  const randomCode = (length: number): string => {
    asked.push(length);
    return 'x'.repeat(length) + String(asked.length);
  };
  let takenCalls = 0;
  // The first ten codes collide, the eleventh is free.
  const taken = (): boolean => ++takenCalls <= 10;
  const code = pickCode(randomCode, taken, 4, 8);
  assert.deepEqual(asked, [4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 5]);
  assert.equal(code, 'xxxxx11');
  assert.equal(takenCalls, 11);
});

test('pickCode stays at the first length after nine collisions', () => {
  const asked: number[] = [];
  const randomCode = (length: number): string => {
    asked.push(length);
    return `c${asked.length}`;
  };
  let takenCalls = 0;
  const code = pickCode(randomCode, () => ++takenCalls <= 9, 3, 6);
  assert.deepEqual(asked, [3, 3, 3, 3, 3, 3, 3, 3, 3, 3]);
  assert.equal(code, 'c10');
});

test('pickCode counts a reserved word as a collision', () => {
  // A generator that can only produce `api` at length 3: every try there is a collision.
  const asked: number[] = [];
  const randomCode = (length: number): string => {
    asked.push(length);
    return length === 3 ? 'api' : 'abcd';
  };
  assert.equal(
    pickCode(randomCode, () => false, 3, 4),
    'abcd',
  );
  assert.deepEqual(asked, [...Array<number>(10).fill(3), 4]);

  for (const word of RESERVED_SEGMENTS) {
    assert.equal(
      pickCode(
        () => word,
        () => false,
        1,
        2,
      ),
      undefined,
      word,
    );
  }
});

test('pickCode counts a reserved word in any case as a collision (docs/api.md, short codes)', () => {
  // `Metrics` and `API` are made of alphabet characters, so a generator can draw them.
  for (const word of ['Metrics', 'METRICS', 'API', 'Api', 'Docs', 'mCp']) {
    assert.equal(isReserved(word), true, word);
    assert.equal(
      pickCode(
        () => word,
        () => false,
        1,
        8,
      ),
      undefined,
      word,
    );
  }
  for (const word of ['apis', 'metric', 'Doc5']) assert.equal(isReserved(word), false, word);
});

test('the reserved first segments are exactly those of docs/api.md, short codes', () => {
  assert.deepEqual([...RESERVED_SEGMENTS].sort(), [
    'api',
    'auth-check',
    'docs',
    'favicon.ico',
    'healthz',
    'mcp',
    'metrics',
    'openapi.json',
    'robots.txt',
    'schemas',
    'static',
  ]);
});

test("a surface switched on reserves its word (rest for Shlink's API), in any case, for generated codes too; off, rest is a code", () => {
  assert.equal(reservedWords({}), RESERVED_SEGMENTS);
  assert.equal(reservedWords({ shlinkApi: false }), RESERVED_SEGMENTS);
  const shlink = reservedWords({ shlinkApi: true });
  assert.deepEqual([...shlink].sort(), [...RESERVED_SEGMENTS, 'rest'].sort());
  for (const word of ['rest', 'REST', 'Rest']) {
    assert.equal(isReserved(word, shlink), true, word);
    assert.equal(isReserved(word), false, word);
  }
  const rest = [...candidateCodes(() => 'rest', 4, 4, shlink)];
  assert.deepEqual(rest, []);
  assert.equal([...candidateCodes(() => 'rest', 4, 4)].length, TRIES_PER_LENGTH);
});

test('pickCode returns undefined after ten tries at every length', () => {
  const asked: number[] = [];
  const randomCode = (length: number): string => {
    asked.push(length);
    return 'a'.repeat(length);
  };
  assert.equal(
    pickCode(randomCode, () => true, 2, 4),
    undefined,
  );
  assert.deepEqual(asked, [...Array<number>(10).fill(2), ...Array<number>(10).fill(3), ...Array<number>(10).fill(4)]);
});

test('isCodeShaped accepts the custom-code alphabet A-Z a-z 0-9 - _, 1 to 64 characters', () => {
  const cases: [string, boolean][] = [
    ['1', true],
    ['abcDEF', true],
    [ALPHABET, true],
    ['z'.repeat(64), true],
    ['z'.repeat(65), false],
    ['', false],
    ['0', true],
    ['abO', true],
    ['abI', true],
    ['abl', true],
    ['ab-c', true],
    ['my_link-2026', true],
    ['-', true],
    ['ab c', false],
    ['ab/c', false],
    ['ab%41', false],
    ['abé', false],
    ['ab.c', false],
    ['ab~c', false],
    ['ab+c', false],
  ];
  for (const [input, expected] of cases) assert.equal(isCodeShaped(input), expected, JSON.stringify(input));
});

async function create(h: Harness, url: string): Promise<{ status: number; body: string }> {
  const body = JSON.stringify({ url });
  const r = await h.req('/api/shorten', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: r.status, body: r.body };
}

test('all-zero randomness: codes 1, 11, 111, then 503 with a detail', async (t) => {
  const zeros: RandomSource = (buffer) => buffer.fill(0);
  const h = await start(t, { minShortLength: 1, maxShortLength: 3, random: zeros, apiKeys: ['k'] });
  const base = `http://127.0.0.1:${h.port}`;
  const codes: string[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await create(h, `https://example.com/${i}`);
    assert.equal(r.status, 201, r.body);
    assert.ok(r.body.startsWith(`${base}/`), r.body);
    codes.push(r.body.slice(base.length + 1));
  }
  assert.deepEqual(codes, ['1', '11', '111']);

  const full = await create(h, 'https://example.com/3');
  assert.equal(full.status, 503);
  const detail = (JSON.parse(full.body) as { detail: unknown }).detail;
  assert.equal(typeof detail, 'string');
  assert.ok((detail as string).length > 0);

  // The refused link was not stored.
  const list = await h.req('/api/urls', { headers: { 'x-api-key': 'k' } });
  assert.equal((JSON.parse(list.body) as UrlList).count, 3);
});

test('one-character codes with real randomness: distinct codes until 503, at most 58', async (t) => {
  const h = await start(t, { minShortLength: 1, maxShortLength: 1 });
  const base = `http://127.0.0.1:${h.port}`;
  const codes: string[] = [];
  let exhausted: { status: number; body: string } | undefined;
  // 58 codes exist; the 59th create cannot succeed, so the loop always ends in a 503.
  for (let i = 0; i <= 58; i++) {
    const r = await create(h, `https://example.com/${i}`);
    if (r.status !== 201) {
      exhausted = r;
      break;
    }
    codes.push(r.body.slice(base.length + 1));
  }
  assert.ok(exhausted, 'a 503 came within 59 creates');
  assert.equal(exhausted.status, 503);
  assert.ok((JSON.parse(exhausted.body) as { detail: string }).detail.length > 0);
  assert.ok(codes.length <= 58);
  assert.equal(new Set(codes).size, codes.length, 'codes are distinct');
  for (const code of codes) {
    assert.equal(code.length, 1);
    assert.ok(ALPHABET.includes(code), code);
  }
  // Every code still redirects to its own URL.
  for (const [i, code] of codes.entries()) {
    const r = await h.req(`/${code}`, { method: 'HEAD' });
    assert.equal(r.status, 302);
    assert.equal(r.headers.location, `https://example.com/${i}`);
  }
});

test('a path with characters outside the alphabet is an unknown code (404 page)', async (t) => {
  const zeros: RandomSource = (buffer) => buffer.fill(0);
  const h = await start(t, { minShortLength: 1, maxShortLength: 1, random: zeros });
  assert.equal(await h.shorten('https://example.com/'), '1');
  for (const path of ['/0', '/O', '/I', '/l', '/1-']) {
    const r = await h.req(path);
    assert.equal(r.status, 404, path);
    assert.match(r.headers['content-type'] ?? '', /^text\/html/);
    assert.match(r.body, /Link not found/);
  }
});

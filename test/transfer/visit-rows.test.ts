/**
 * A visit event as a line of the visits export and a row of its import: what the writer writes the
 * reader reads back, over every value of every field, in both formats; every bad value of every
 * field is refused with its field's sentence.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CsvReader } from '../../src/transfer/csv.ts';
import { checkVisitRow, VISIT_COLUMNS, VISIT_ROWS, visitCsvLine, visitJsonLine, type VisitField } from '../../src/transfer/visit-rows.ts';
import type { CodedEvent, VisitEvent } from '../../src/visits/event.ts';
import { BROWSERS, DEVICES, SYSTEMS } from '../../src/visits/packed.ts';

/** 2024-05-01T12:00:00Z. */
const NOW = 1714564800;

const EVENT: VisitEvent = {
  time: 1700000000,
  referrer: 'news.example',
  country: 'DE',
  browser: 'Firefox',
  os: 'Linux',
  device: 'desktop',
  bot: false,
  visitor: 12345,
};

/** The values of a CSV line, by field, as the import's reader hands them over. */
function csvValues(header: string, line: string): Partial<Record<VisitField, unknown>> {
  const reader = new CsvReader();
  const rows = [...reader.push(header + line), ...reader.end()];
  const columns = VISIT_ROWS.columnsOf(rows[0]!.fields);
  assert.ok(typeof columns !== 'string', String(columns));
  const values: Partial<Record<VisitField, unknown>> = {};
  for (const [field, at] of Object.entries(columns) as [VisitField, number][]) values[field] = rows[1]!.fields[at];
  return values;
}

function jsonValues(line: string): Partial<Record<VisitField, unknown>> {
  const values: Partial<Record<VisitField, unknown>> = {};
  for (const [key, v] of Object.entries(JSON.parse(line) as object)) {
    const field = VISIT_ROWS.fieldOf(key);
    if (field !== undefined) values[field] = v;
  }
  return values;
}

const HEADER = `${VISIT_COLUMNS.join(',')}\r\n`;

/** Every value each field can take, each at least once, in a handful of events. */
function everyValue(): VisitEvent[] {
  const out: VisitEvent[] = [];
  const n = Math.max(BROWSERS.length, SYSTEMS.length, DEVICES.length) + 1;
  // `-x.example` starts a formula, so its CSV cell is escaped, and read back.
  const referrers = [
    null,
    'news.example',
    'xn--bcher-kva.example',
    '[2001:db8::1]',
    'com.google.android.gm',
    'a'.repeat(253),
    '-x.example',
    'sub_domain.example',
    '192.0.2.1',
  ];
  const countries = [null, 'AA', 'DE', 'ZZ'];
  const times = [0, 1, 1700000000, NOW, NOW + 86400];
  for (let i = 0; i < Math.max(n, referrers.length, countries.length, times.length); i++) {
    out.push({
      time: times[i % times.length]!,
      referrer: referrers[i % referrers.length]!,
      country: countries[i % countries.length]!,
      browser: i < BROWSERS.length ? BROWSERS[i]! : null,
      os: i < SYSTEMS.length ? SYSTEMS[i]! : null,
      device: i < DEVICES.length ? DEVICES[i]! : null,
      bot: i % 2 === 1,
      visitor: i % 3 === 0 ? null : -i,
    });
  }
  return out;
}

test('the writer: JSON Lines and CSV of one event, exactly; the visitor id is never written', () => {
  const coded: CodedEvent = { code: 'abc-_9', event: EVENT };
  assert.equal(
    visitJsonLine(coded),
    '{"short_code":"abc-_9","time":1700000000,"referrer":"news.example","country":"DE","browser":"Firefox","os":"Linux","device":"desktop","bot":false,"domain":null,"rule":null}\n',
  );
  assert.equal(visitCsvLine(coded), 'abc-_9,1700000000,news.example,DE,Firefox,Linux,desktop,false,,\r\n');
  const empty: CodedEvent = { code: 'x', event: { time: 5, referrer: null, country: null, browser: null, os: null, device: null, bot: true, visitor: null } };
  assert.equal(
    visitJsonLine(empty),
    '{"short_code":"x","time":5,"referrer":null,"country":null,"browser":null,"os":null,"device":null,"bot":true,"domain":null,"rule":null}\n',
  );
  assert.equal(visitCsvLine(empty), 'x,5,,,,,,true,,\r\n');
  assert.deepEqual([...VISIT_COLUMNS], ['short_code', 'time', 'referrer', 'country', 'browser', 'os', 'device', 'bot', 'domain', 'rule']);
});

test('the writer: a link on another domain (store key `<host>/<code>`) is written as its bare code and its domain, never its key', () => {
  const coded: CodedEvent = { code: 'go.example:8443/abc-_9', event: EVENT };
  assert.equal(
    visitJsonLine(coded),
    '{"short_code":"abc-_9","time":1700000000,"referrer":"news.example","country":"DE","browser":"Firefox","os":"Linux","device":"desktop","bot":false,"domain":"go.example:8443","rule":null}\n',
  );
  assert.equal(visitCsvLine(coded), 'abc-_9,1700000000,news.example,DE,Firefox,Linux,desktop,false,go.example:8443,\r\n');
  // The reader hands the domain over as written, for the import to resolve against its own domains.
  const expected = { ok: true, code: 'abc-_9', domain: 'go.example:8443', event: { ...EVENT, visitor: null } };
  assert.deepEqual(checkVisitRow(jsonValues(visitJsonLine(coded)), NOW, false), expected);
  assert.deepEqual(checkVisitRow(csvValues(HEADER, visitCsvLine(coded)), NOW, true), expected);
  // Absent, empty or null: null (the default domain).
  assert.equal((checkVisitRow({ code: 'abc', time: 1 }, NOW, false) as { domain: unknown }).domain, null);
  assert.equal((checkVisitRow({ code: 'abc', time: '1', domain: '' }, NOW, true) as { domain: unknown }).domain, null);
  assert.equal((checkVisitRow({ code: 'abc', time: 1, domain: null }, NOW, false) as { domain: unknown }).domain, null);
});

test('the CSV writer escapes a cell that would start a spreadsheet formula: a code or a referrer starting with -', () => {
  const coded: CodedEvent = { code: '-cmd', event: { ...EVENT, referrer: '-x.example' } };
  assert.equal(visitCsvLine(coded), "'-cmd,1700000000,'-x.example,DE,Firefox,Linux,desktop,false,,\r\n");
  assert.deepEqual(checkVisitRow(csvValues(HEADER, visitCsvLine(coded)), NOW, true), {
    ok: true,
    code: '-cmd',
    domain: null,
    event: { ...coded.event, visitor: null },
  });
});

test('what the writer writes the reader reads back, every value of every field, in both formats (without the visitor id)', () => {
  for (const event of everyValue()) {
    const coded: CodedEvent = { code: 'Code_1', event };
    const expected = { ok: true, code: 'Code_1', domain: null, event: { ...event, visitor: null } };
    assert.deepEqual(checkVisitRow(jsonValues(visitJsonLine(coded)), NOW, false), expected, visitJsonLine(coded));
    assert.deepEqual(checkVisitRow(csvValues(HEADER, visitCsvLine(coded)), NOW, true), expected, visitCsvLine(coded));
  }
});

test('the reader normalizes: a referrer is lower-cased, a country upper-cased, an ISO 8601 time is Unix seconds, empty is null', () => {
  const got = checkVisitRow(
    { code: 'abc', time: '2023-11-14T22:13:20Z', referrer: 'News.EXAMPLE', country: 'de', browser: '', os: '', device: '', bot: '' },
    NOW,
    true,
  );
  assert.deepEqual(got, {
    ok: true,
    code: 'abc',
    domain: null,
    event: { time: 1700000000, referrer: 'news.example', country: 'DE', browser: null, os: null, device: null, bot: false, visitor: null },
  });
  assert.deepEqual(
    checkVisitRow({ code: 'abc', time: '2023-11-14 22:13:20' }, NOW, true),
    checkVisitRow({ code: 'abc', time: 1700000000, bot: false }, NOW, false),
    'a time without a zone is UTC; absent fields are null, bot false',
  );
  assert.deepEqual(
    checkVisitRow({ code: 'abc', time: '2023-11-14T23:13:20+01:00', referrer: '', bot: false }, NOW, false),
    checkVisitRow({ code: 'abc', time: 1700000000 }, NOW, false),
  );
  const visitorIgnored = jsonValues('{"short_code":"abc","time":1,"visitor":99,"bot":true}');
  assert.deepEqual(checkVisitRow(visitorIgnored, NOW, false), {
    ok: true,
    code: 'abc',
    domain: null,
    event: { time: 1, referrer: null, country: null, browser: null, os: null, device: null, bot: true, visitor: null },
  });
});

test('every bad value of every field is refused with the sentence of its field', () => {
  const good = { code: 'abc', time: 1700000000, referrer: 'news.example', country: 'DE', browser: 'Chrome', os: 'Windows', device: 'mobile', bot: false };
  const sentences: Record<string, RegExp> = {
    code: /^short_code must be 1 to 64 characters of A-Z a-z 0-9 - _$/,
    time: /^time must be Unix seconds \(an integer from 0 to 4294967295\) or an ISO 8601 time$/,
    referrer: /^referrer must be a host name/,
    country: /^country must be two letters A-Z \(ISO 3166-1 alpha-2\), or empty$/,
    browser: /^browser must be one of Chrome, Safari, Firefox, Edge, Opera, Samsung Internet, Other, or empty$/,
    os: /^os must be one of Windows, macOS, iOS, Android, Linux, ChromeOS, Other, or empty$/,
    device: /^device must be one of desktop, mobile, tablet, other, or empty$/,
    bot: /^bot must be true or false$/,
  };
  const table: [VisitField, unknown[], unknown[]][] = [
    // field, bad JSON values, bad CSV texts
    ['code', [null, 7, 'a b', 'ab/c', 'é', 'x'.repeat(65), ['abc']], ['', 'a b', 'abc.', 'x'.repeat(65)]],
    ['time', [null, -1, 1.5, 4294967296, '1700000000.5', 'yesterday', true, '2023-02-29T00:00:00Z'], ['', '-1', '1e9', 'yesterday', '2023-13-01']],
    [
      'referrer',
      [
        7,
        true,
        'a\tb',
        'a\nb',
        'a b',
        'https://news.example',
        'news.example/path',
        'news.example?q',
        'user@news.example',
        'bücher.example',
        'a'.repeat(254),
        'a\\b',
        '=importxml(concat("http",char(58)))',
        'a(b).example',
        'a"b',
        'a,b',
        '+1',
        '@SUM(1)',
        'a..b',
        '[::ffff:1.2.3.4]',
      ],
      // A spreadsheet formula, escaped or not: no visit records one.
      ['a b', 'a\tb', 'news.example/x', 'ex#ample', '=1+1', "'=1+1", '=HYPERLINK("https://evil.example")', 'exa$mple.com'],
    ],
    ['country', [7, 'D', 'DEU', 'D1', 'ÄÖ', true], ['D', 'DEU', '12']],
    ['browser', [7, 'chrome', 'Netscape', true], ['chrome', 'Other ']],
    ['os', [7, 'macos', 'BeOS'], ['windows', 'Mac OS']],
    ['device', [7, 'Desktop', 'phone'], ['Mobile', 'tv']],
    ['bot', [0, 1, 'true', 'false', 'yes'], ['TRUE', 'False', '1', '0', 'yes']],
  ];
  for (const [field, jsonBad, csvBad] of table) {
    for (const value of jsonBad) {
      const got = checkVisitRow({ ...good, [field]: value }, NOW, false);
      assert.equal(got.ok, false, `${field} ${JSON.stringify(value)} (JSON)`);
      if (!got.ok) assert.match(got.detail, sentences[field]!, `${field} ${JSON.stringify(value)}`);
    }
    for (const text of csvBad) {
      const row = Object.fromEntries(Object.entries({ ...good, bot: 'false' }).map(([k, v]) => [k, String(v)]));
      const got = checkVisitRow({ ...row, [field]: text }, NOW, true);
      assert.equal(got.ok, false, `${field} ${JSON.stringify(text)} (CSV)`);
      if (!got.ok) assert.match(got.detail, sentences[field]!, `${field} ${JSON.stringify(text)}`);
    }
  }
  // JSON booleans are not CSV text, and CSV text is not a JSON boolean.
  assert.equal(checkVisitRow({ ...good, bot: true }, NOW, true).ok, false);
  assert.equal(checkVisitRow({ ...good, bot: 'true' }, NOW, false).ok, false);
  // The future: a day of clock skew is allowed, more is not.
  assert.equal(checkVisitRow({ ...good, time: NOW + 86400 }, NOW, false).ok, true);
  assert.deepEqual(checkVisitRow({ ...good, time: NOW + 86401 }, NOW, false), { ok: false, detail: 'time is in the future' });
});

test('the header: found by name, case-insensitively, in any order; short_code and time are required; a column named twice is refused', () => {
  assert.deepEqual(VISIT_ROWS.columnsOf(['Bot', ' TIME ', 'extra', 'short_code']), { bot: 0, time: 1, code: 3 });
  assert.deepEqual(VISIT_ROWS.columnsOf([...VISIT_COLUMNS]), {
    code: 0,
    time: 1,
    referrer: 2,
    country: 3,
    browser: 4,
    os: 5,
    device: 6,
    bot: 7,
    domain: 8,
    rule: 9,
  });
  assert.deepEqual(VISIT_ROWS.columnsOf(['DOMAIN', 'time', 'short_code']), { domain: 0, time: 1, code: 2 });
  assert.equal(VISIT_ROWS.columnsOf(['short_code', 'time', 'domain', 'Domain']), 'the header names the domain column twice ("domain" and "Domain")');
  assert.equal(
    VISIT_ROWS.columnsOf(['time', 'bot']),
    'the header has no short_code column (a visits import starts with short_code,time,referrer,country,browser,os,device,bot,domain,rule)',
  );
  assert.equal(
    VISIT_ROWS.columnsOf(['referrer']),
    'the header has no short_code or time column (a visits import starts with short_code,time,referrer,country,browser,os,device,bot,domain,rule)',
  );
  assert.equal(VISIT_ROWS.columnsOf(['short_code', 'time', 'Time']), 'the header names the time column twice ("time" and "Time")');
  assert.equal(VISIT_ROWS.fieldOf('visitor'), undefined, 'a visitor column is ignored');
});

test("an event's rule: written as its index, read back from JSON and CSV; anything but an index 0–9 refused", () => {
  const ruled: CodedEvent = { code: 'abc-_9', event: { ...EVENT, rule: 3 } };
  assert.match(visitJsonLine(ruled), /"domain":null,"rule":3\}\n$/);
  assert.equal(visitCsvLine(ruled), 'abc-_9,1700000000,news.example,DE,Firefox,Linux,desktop,false,,3\r\n');
  const expected = { ok: true, code: 'abc-_9', domain: null, event: { ...EVENT, visitor: null, rule: 3 } };
  assert.deepEqual(checkVisitRow(jsonValues(visitJsonLine(ruled)), NOW, false), expected);
  assert.deepEqual(checkVisitRow(csvValues(HEADER, visitCsvLine(ruled)), NOW, true), expected);
  const refusal = { ok: false, detail: 'rule must be the index of a redirect rule, 0 to 9, or empty' };
  for (const [rule, textual] of [
    [10, false],
    [-1, false],
    [1.5, false],
    ['3', false],
    ['10', true],
    ['x', true],
  ] as const) {
    assert.deepEqual(checkVisitRow({ code: 'abc', time: 1, rule }, NOW, textual), refusal, `${rule} ${textual}`);
  }
  assert.equal('rule' in (checkVisitRow({ code: 'abc', time: '1', rule: '' }, NOW, true) as { event: object }).event, false, 'empty: none');
});

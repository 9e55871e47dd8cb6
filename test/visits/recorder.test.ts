/**
 * The recorder (docs/analytics.md): a request's headers and socket → the event of its visit. Pure:
 * fake requests, a fake clock, a fake country source. What an event keeps (the referrer's host,
 * the country, the families, the bot flag, the daily id), what `Sec-GPC: 1`/`DNT: 1` leave out,
 * where the address comes from behind `trust_proxy`, and when a country header is believed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRecorder, headerCountry, type RecorderOptions, type VisitRequest } from '../../src/visits/recorder.ts';
import { createVisitorIds, KEY_BYTES, visitorId } from '../../src/visits/visitor-id.ts';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const SLACK = 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)';
const NOW_MS = Date.UTC(2024, 4, 1, 12, 0, 0, 750);
const KEY = new Uint8Array(KEY_BYTES).fill(3);

function request(headers: Record<string, string>, remoteAddress: string | undefined = '198.51.100.7'): VisitRequest {
  return { headers, socket: { remoteAddress } };
}

/** A recorder over fakes; `asked` lists the addresses the country source was asked about. */
function recorder(options: Partial<RecorderOptions> = {}): { record: ReturnType<typeof createRecorder>; asked: string[]; bots: boolean[] } {
  const asked: string[] = [];
  const bots: boolean[] = [];
  const record = createRecorder({
    trustProxy: 0,
    geoipHeader: '',
    now: () => NOW_MS,
    visitorIds: createVisitorIds({ now: () => NOW_MS, random: (size) => new Uint8Array(size).fill(3) }),
    countries: {
      countryOf: (address) => {
        asked.push(address);
        return address.startsWith('198.51.100.') ? 'DE' : null;
      },
    },
    recorded: (bot) => bots.push(bot),
    ...options,
  });
  return { record, asked, bots };
}

test('an event: time in seconds, the referrer host, the country of the address, the families, the daily id', () => {
  const { record } = recorder();
  const event = record.event(request({ 'user-agent': CHROME, referer: 'https://News.Example.com/path?q=secret' }));
  assert.deepEqual(event, {
    time: Math.floor(NOW_MS / 1000),
    referrer: 'news.example.com',
    country: 'DE',
    browser: 'Chrome',
    os: 'Windows',
    device: 'desktop',
    bot: false,
    visitor: visitorId(KEY, '198.51.100.7', CHROME),
  });
});

test('no headers at all: families null, not a bot, no referrer; the id of the address alone', () => {
  const { record } = recorder();
  const event = record.event(request({}, '203.0.113.5'));
  assert.deepEqual(event, {
    time: Math.floor(NOW_MS / 1000),
    referrer: null,
    country: null,
    browser: null,
    os: null,
    device: null,
    bot: false,
    visitor: visitorId(KEY, '203.0.113.5', undefined),
  });
});

test('Sec-GPC: 1 or DNT: 1 keeps the time and the bot flag only, and nobody is asked for a country', () => {
  for (const headers of [{ 'sec-gpc': '1' }, { dnt: '1' }]) {
    const { record, asked } = recorder();
    const event = record.event(request({ ...headers, 'user-agent': SLACK, referer: 'https://chat.example/' }));
    assert.deepEqual(
      event,
      { time: Math.floor(NOW_MS / 1000), referrer: null, country: null, browser: null, os: null, device: null, bot: true, visitor: null },
      JSON.stringify(headers),
    );
    assert.deepEqual(asked, []);
  }
  // DNT: 0 is no such request.
  assert.notEqual(recorder().record.event(request({ dnt: '0', 'user-agent': CHROME })).visitor, null);
});

test('trust_proxy 0: X-Forwarded-For is ignored, the socket is the client', () => {
  const { record, asked } = recorder();
  const event = record.event(request({ 'user-agent': CHROME, 'x-forwarded-for': '192.0.2.1' }, '::ffff:198.51.100.9'));
  assert.deepEqual(asked, ['198.51.100.9']);
  assert.equal(event.visitor, visitorId(KEY, '198.51.100.9', CHROME));
});

test('trust_proxy 1: the last X-Forwarded-For entry is the client, for the country and the id', () => {
  const { record, asked } = recorder({ trustProxy: 1 });
  const event = record.event(request({ 'user-agent': CHROME, 'x-forwarded-for': '192.0.2.1, 198.51.100.20' }, '10.0.0.1'));
  assert.deepEqual(asked, ['198.51.100.20']);
  assert.equal(event.country, 'DE');
  assert.equal(event.visitor, visitorId(KEY, '198.51.100.20', CHROME));
});

test("trust_proxy 1 with the header: the socket's address is not read (a system call a visit need not make)", () => {
  const { record } = recorder({ trustProxy: 1 });
  const socket = {
    get remoteAddress(): string {
      throw new Error('the socket was asked');
    },
  };
  const event = record.event({ headers: { 'user-agent': CHROME, 'x-forwarded-for': '198.51.100.20' }, socket });
  assert.equal(event.visitor, visitorId(KEY, '198.51.100.20', CHROME));
  // Without the header the socket is the client, as before.
  assert.throws(() => record.event({ headers: { 'user-agent': CHROME }, socket }), /the socket was asked/);
});

test('an address that cannot be told: no country asked, no id', () => {
  const { record, asked } = recorder({ trustProxy: 1 });
  const event = record.event(request({ 'user-agent': CHROME, 'x-forwarded-for': 'unknown' }, '10.0.0.1'));
  assert.deepEqual(asked, []);
  assert.equal(event.country, null);
  assert.equal(event.visitor, null);
});

test('geoip_header behind a proxy: the header is the country, the database is not asked', () => {
  const { record, asked } = recorder({ trustProxy: 1, geoipHeader: 'cf-ipcountry' });
  const event = record.event(request({ 'user-agent': CHROME, 'cf-ipcountry': 'fr' }, '198.51.100.1'));
  assert.equal(event.country, 'FR');
  assert.deepEqual(asked, []);
  // No header: unknown, not the database's answer (the proxy is the one to say).
  assert.equal(record.event(request({ 'user-agent': CHROME }, '198.51.100.1')).country, null);
});

test('geoip_header without trust_proxy is not believed: the database answers', () => {
  const { record, asked } = recorder({ trustProxy: 0, geoipHeader: 'cf-ipcountry' });
  const event = record.event(request({ 'user-agent': CHROME, 'cf-ipcountry': 'FR' }, '198.51.100.1'));
  assert.equal(event.country, 'DE');
  assert.deepEqual(asked, ['198.51.100.1']);
});

test('a country header value is a country only as two letters A-Z, and XX (unknown) and T1 (Tor) are none', () => {
  const cases: readonly [string | string[] | undefined, string | null][] = [
    ['DE', 'DE'],
    ['us', 'US'],
    ['Gb', 'GB'],
    ['XX', null],
    ['xx', null],
    ['T1', null],
    ['', null],
    ['D', null],
    ['DEU', null],
    ['D1', null],
    ['É', null],
    ['ÉS', null],
    [' DE', null],
    [['DE'], null],
    [undefined, null],
  ];
  for (const [value, country] of cases) assert.equal(headerCountry(value), country, JSON.stringify(value));
});

test('the source costs nothing until the store calls it, and then makes the event and counts it by bot flag', () => {
  let clockReads = 0;
  const { record, bots } = recorder({
    now: () => {
      clockReads++;
      return NOW_MS;
    },
  });
  const human = record.source(request({ 'user-agent': CHROME }));
  const bot = record.source(request({ 'user-agent': SLACK }));
  assert.equal(clockReads, 0);
  assert.deepEqual(bots, []);
  assert.equal(bot().bot, true);
  assert.equal(human().bot, false);
  assert.equal(clockReads, 2);
  assert.deepEqual(bots, [true, false]);
});

test("ready is the visitor ids': undefined without a shared key, the wait for one with it", async () => {
  assert.equal(recorder().record.ready(), undefined);
  let answer: (key: Uint8Array) => void = () => undefined;
  const ids = createVisitorIds({ now: () => NOW_MS, sharedKey: () => new Promise((resolve) => (answer = resolve)) });
  const { record } = recorder({ visitorIds: ids });
  const waiting = record.ready();
  assert.ok(waiting instanceof Promise);
  answer(new Uint8Array(KEY_BYTES).fill(8));
  await waiting;
  assert.equal(record.ready(), undefined);
  assert.equal(record.event(request({ 'user-agent': CHROME })).visitor, visitorId(new Uint8Array(KEY_BYTES).fill(8), '198.51.100.7', CHROME));
});

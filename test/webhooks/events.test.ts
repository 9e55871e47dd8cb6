/**
 * What a webhook can tell: the event types, a subscription's list of them, and the body
 * of a delivery, `{"type","timestamp","data"}` in that order with an ISO 8601 time, as the
 * Standard Webhooks payload structure has it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { Refusal } from '../../src/links/refusal.ts';
import { checkEventList, clickedData, EVENT_TABLE, EVENT_TYPES, eventBody, isEventType, SUBSCRIBABLE_EVENT_TYPES } from '../../src/webhooks/events.ts';

const SUBSCRIBABLE = ['link.created', 'link.updated', 'link.deleted', 'link.clicked', 'link.limit_reached'];

test('the event types are the five link events, and ping, which only a test delivery sends', () => {
  assert.deepEqual(EVENT_TYPES, [...SUBSCRIBABLE, 'ping']);
  assert.deepEqual(Object.keys(EVENT_TABLE), EVENT_TYPES, 'the table has a row for each, in the same order');
  assert.deepEqual(SUBSCRIBABLE_EVENT_TYPES, SUBSCRIBABLE);
  assert.equal(EVENT_TABLE.ping.subscribable, false);
  for (const type of EVENT_TYPES) {
    assert.match(type, /^[a-z_]+(\.[a-z_]+)*$/, 'the specification recommends full-stop delimited [a-zA-Z0-9_] names');
    assert.ok(EVENT_TABLE[type].description.length > 0);
  }
});

test('isEventType knows the listed types and nothing else', () => {
  for (const type of EVENT_TYPES) assert.equal(isEventType(type), true, type);
  for (const value of [
    'link',
    'link.Created',
    'LINK.CREATED',
    ' link.created',
    'link.created ',
    'link.visited',
    'toString',
    '__proto__',
    'constructor',
    '',
    null,
    1,
    ['ping'],
  ]) {
    assert.equal(isEventType(value), false, JSON.stringify(value));
  }
});

test('a list of known, distinct, subscribable types is taken, in table order', () => {
  assert.deepEqual(checkEventList(['link.created']), ['link.created']);
  assert.deepEqual(checkEventList(['link.limit_reached', 'link.clicked', 'link.created']), ['link.created', 'link.clicked', 'link.limit_reached']);
  assert.deepEqual(checkEventList([...SUBSCRIBABLE].reverse()), SUBSCRIBABLE);
});

test('a list that is not one, is empty, repeats a type, names an unknown one or ping is refused with a reason', () => {
  const rows: [input: unknown, detail: RegExp][] = [
    [undefined, /^events must be an array of event types: one or more of link\.created, link\.updated, link\.deleted, link\.clicked, link\.limit_reached$/],
    [null, /^events must be an array/],
    ['link.created', /^events must be an array/],
    [{ 0: 'link.created', length: 1 }, /^events must be an array/],
    [[], /^events must not be empty: one or more of link\.created/],
    [['link.created', 1], /^events must be strings/],
    [[null], /^events must be strings/],
    [['link.visited'], /^events: "link\.visited" is not an event type: one or more of link\.created/],
    [['toString'], /^events: "toString" is not an event type/],
    [['LINK.CREATED'], /is not an event type/],
    [['ping'], /^events: ping cannot be subscribed to \(it is sent only by a test delivery\)$/],
    [['link.created', 'ping'], /ping cannot be subscribed to/],
    [['link.created', 'link.created'], /^events: link\.created is listed more than once$/],
    [['link.clicked', 'link.created', 'link.clicked'], /^events: link\.clicked is listed more than once$/],
  ];
  for (const [input, detail] of rows) {
    const result = checkEventList(input);
    assert.ok(result instanceof Refusal, JSON.stringify(input));
    assert.match(result.detail, detail, JSON.stringify(input));
  }
});

test('an unknown type is echoed cut to 40 characters, so a long one cannot fill a log line', () => {
  const long = `${'ü'.repeat(39)}😀${'x'.repeat(10_000)}`;
  const result = checkEventList([long]);
  assert.ok(result instanceof Refusal);
  assert.equal(result.detail, `events: "${'ü'.repeat(39)}😀…" is not an event type: one or more of ${SUBSCRIBABLE.join(', ')}`);
});

test('the body is {"type","timestamp","data"} in that order, compact, with the time in ISO 8601 UTC to the second', () => {
  const data = { short_code: 'abc', domain: null, original_url: 'https://example.com/?q=é' };
  const body = eventBody('link.created', 1711843200, JSON.stringify(data));
  assert.equal(
    body,
    '{"type":"link.created","timestamp":"2024-03-31T00:00:00Z","data":{"short_code":"abc","domain":null,"original_url":"https://example.com/?q=é"}}',
  );
  assert.deepEqual(Object.keys(JSON.parse(body)), ['type', 'timestamp', 'data']);
  assert.equal(eventBody('ping', 0, '{}'), '{"type":"ping","timestamp":"1970-01-01T00:00:00Z","data":{}}');
  assert.equal(eventBody('link.deleted', 1667507170, 'null'), '{"type":"link.deleted","timestamp":"2022-11-03T20:26:10Z","data":null}');
  assert.equal(eventBody('link.updated', 253402300799, '[]'), '{"type":"link.updated","timestamp":"9999-12-31T23:59:59Z","data":[]}');
});

test('a body made of data already JSON text is the bytes of the body made of its value', () => {
  fc.assert(
    fc.property(fc.constantFrom(...EVENT_TYPES), fc.integer({ min: 0, max: 253402300799 }), fc.jsonValue(), (type, time, value) => {
      const iso = new Date(time * 1000).toISOString().replace('.000Z', 'Z');
      assert.equal(eventBody(type, time, JSON.stringify(value)), JSON.stringify({ type, timestamp: iso, data: value }));
    }),
  );
});

test('the timestamp reads back as the same second', () => {
  for (const seconds of [0, 1, 59, 951782400, 1711843199, 1711843200, 4102444800]) {
    const { timestamp } = JSON.parse(eventBody('link.clicked', seconds, '{}')) as { timestamp: string };
    assert.match(timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(Date.parse(timestamp) / 1000, seconds);
  }
});

test('a body that cannot be written as specified is a bug: unknown type, a time that is not whole seconds from 1970 to 9999, no data', () => {
  assert.throws(() => eventBody('link.visited' as 'ping', 0, '{}'), TypeError);
  for (const bad of [-1, 1.5, Number.NaN, 253402300800, 1711843200000 * 1000]) assert.throws(() => eventBody('ping', bad, '{}'), RangeError, String(bad));
});

test('link.clicked data is the code, the domain and the event, never its visitor id or anything else', () => {
  const recorded = {
    time: 1711843200,
    referrer: 'news.example',
    country: 'DE',
    browser: 'Firefox',
    os: 'Linux',
    device: 'desktop',
    bot: false,
    visitor: -123456789,
    address: '192.0.2.1',
  };
  const data = clickedData('abc', 'sho.rt', recorded);
  assert.deepEqual(data, {
    short_code: 'abc',
    domain: 'sho.rt',
    visit: { time: 1711843200, referrer: 'news.example', country: 'DE', browser: 'Firefox', os: 'Linux', device: 'desktop', bot: false },
  });
  assert.equal(
    eventBody('link.clicked', recorded.time, JSON.stringify(data)),
    '{"type":"link.clicked","timestamp":"2024-03-31T00:00:00Z","data":{"short_code":"abc","domain":"sho.rt","visit":{"time":1711843200,"referrer":"news.example","country":"DE","browser":"Firefox","os":"Linux","device":"desktop","bot":false}}}',
  );
  const untracked = { time: 5, referrer: null, country: null, browser: null, os: null, device: null, bot: true, visitor: null };
  assert.deepEqual(clickedData('xyz', null, untracked), {
    short_code: 'xyz',
    domain: null,
    visit: { time: 5, referrer: null, country: null, browser: null, os: null, device: null, bot: true },
  });
});

/**
 * The create rate limit's rules (links/create-limit.ts), without a socket: the accepted spellings,
 * whom a request counts against (the address `trust_proxy` gives, an IPv6 client by its /64), the
 * fixed window with a fake clock (N admitted, the next refused with the exact seconds left, admitted
 * again once they passed), and memory: ended windows are dropped, and never more than the cap are kept.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLimiter, limitKey, parseRate, rateText, type CreateLimiter } from '../../src/links/create-limit.ts';
import type { VisitRequest } from '../../src/visits/recorder.ts';

const T0 = Date.UTC(2025, 0, 1, 12, 0, 0);

/** A request from `socket`, with `forwarded` as its X-Forwarded-For when given. */
function from(socket: string, forwarded?: string): VisitRequest {
  return { socket: { remoteAddress: socket }, headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded } };
}

function limiter(rate: string, trustProxy = 0, maxClients?: number): { limit: CreateLimiter; clock: { t: number } } {
  const clock = { t: T0 };
  const limit = createLimiter(parseRate(rate)!, { trustProxy, now: () => clock.t, ...(maxClients === undefined ? {} : { maxClients }) });
  return { limit, clock };
}

test('the accepted spellings, kept in one; empty is off; anything else is refused', () => {
  const accepted: [string, string, number, number][] = [
    ['60/min', '60/min', 60, 60_000],
    [' 5 / S ', '5/s', 5, 1000],
    ['1000/h', '1000/h', 1000, 3_600_000],
    ['1/min', '1/min', 1, 60_000],
    ['1000000/s', '1000000/s', 1_000_000, 1000],
  ];
  for (const [raw, kept, limit, windowMs] of accepted) {
    assert.equal(rateText(raw), kept, raw);
    assert.deepEqual(parseRate(raw), { limit, windowMs }, raw);
  }
  assert.equal(parseRate(''), undefined);
  assert.equal(parseRate('  '), undefined);
  assert.equal(rateText(''), '');
  for (const bad of ['60', '60/m', '60/d', '60/minute', '0/min', '1000001/s', '-1/s', '1.5/s', '/min', 'off', '60 per min']) {
    assert.throws(() => parseRate(bad), { name: 'RangeError', message: /^must be N\/s, N\/min or N\/h with N from 1 to 1000000/ }, bad);
  }
});

test('whom a create counts against: one canonical address, an IPv6 client by its /64', () => {
  const rows: [string | null, string][] = [
    ['203.0.113.7', '203.0.113.7'],
    ['203.0.113.7:5123', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:DB8:0:0:ffff:1:2:3', '2001:db8:0:0::/64'],
    ['[2001:db8:0:0:1::9]:443', '2001:db8:0:0::/64'],
    ['2001:db8:0:1::1', '2001:db8:0:1::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['2001:db8:1:2:3::', '2001:db8:1:2::/64'],
    ['unknown', 'unknown'],
    [null, 'unknown'],
  ];
  for (const [entry, key] of rows) assert.equal(limitKey(entry), key, String(entry));
});

test('the window: N admitted, N+1 refused with the exact seconds left, admitted again once they passed', () => {
  const { limit, clock } = limiter('3/min');
  const client = from('198.51.100.1');
  assert.equal(limit.take(client), 0);
  clock.t += 10_500;
  assert.equal(limit.take(client), 0);
  assert.equal(limit.take(client), 0);
  // 10.5 s into a 60 s window: 49.5 s left, said as 50 (rounded up: waiting that long always works).
  assert.equal(limit.take(client), 50);
  clock.t += 40_000;
  // A refused create is not counted: the wait only shrinks.
  assert.equal(limit.take(client), 10);
  clock.t += 9_499;
  assert.equal(limit.take(client), 1, '1 ms left is still a whole second');
  clock.t += 1;
  // The window has ended (60 s after its first create): a new one opens with this create.
  assert.equal(limit.take(client), 0);
  assert.equal(limit.take(client), 0);
  assert.equal(limit.take(client), 0);
  assert.equal(limit.take(client), 60);
});

test('per second and per hour windows', () => {
  const perSecond = limiter('2/s');
  const a = from('198.51.100.2');
  assert.deepEqual([perSecond.limit.take(a), perSecond.limit.take(a), perSecond.limit.take(a)], [0, 0, 1]);
  perSecond.clock.t += 1000;
  assert.equal(perSecond.limit.take(a), 0);
  const perHour = limiter('1/h');
  assert.equal(perHour.limit.take(a), 0);
  perHour.clock.t += 60_000;
  assert.equal(perHour.limit.take(a), 3540);
});

test('two addresses are counted apart; two addresses of one IPv6 /64 together', () => {
  const { limit } = limiter('1/min');
  assert.equal(limit.take(from('198.51.100.1')), 0);
  assert.equal(limit.take(from('198.51.100.2')), 0);
  assert.equal(limit.take(from('198.51.100.1')), 60);
  assert.equal(limit.take(from('198.51.100.2')), 60);
  assert.equal(limit.take(from('2001:db8::1')), 0);
  assert.equal(limit.take(from('2001:db8::2')), 60, 'the same /64');
  assert.equal(limit.take(from('2001:db8:0:1::1')), 0, 'the next /64');
});

test('trust_proxy 0: X-Forwarded-For is ignored, the socket is the client', () => {
  const { limit } = limiter('1/min', 0);
  assert.equal(limit.take(from('10.0.0.5', '198.51.100.1')), 0);
  assert.equal(limit.take(from('10.0.0.5', '198.51.100.2')), 60, 'a header anyone can write makes no new client');
  assert.equal(limit.take(from('10.0.0.6', '198.51.100.1')), 0);
});

test('trust_proxy 1: the last X-Forwarded-For entry is the client; what the client wrote left of it is never read', () => {
  const { limit } = limiter('1/min', 1);
  // Both through the one proxy at 10.0.0.5.
  assert.equal(limit.take(from('10.0.0.5', '198.51.100.1')), 0);
  assert.equal(limit.take(from('10.0.0.5', '198.51.100.2')), 0, 'another client behind the same proxy');
  assert.equal(limit.take(from('10.0.0.5', '203.0.113.9, 198.51.100.1')), 60, 'a forged entry in front changes nothing');
  // A request that went round the proxy counts against its socket.
  assert.equal(limit.take(from('10.0.0.5')), 0);
  assert.equal(limit.take(from('10.0.0.5')), 60);
});

test('trust_proxy 2: the second entry from the right', () => {
  const { limit } = limiter('1/min', 2);
  assert.equal(limit.take(from('10.0.0.5', '198.51.100.1, 10.0.0.9')), 0);
  assert.equal(limit.take(from('10.0.0.5', '198.51.100.1, 10.0.0.8')), 60, 'same client, another inner proxy');
  assert.equal(limit.take(from('10.0.0.5', '198.51.100.2, 10.0.0.9')), 0);
});

test('memory: ended windows are dropped as the clock passes them', () => {
  const { limit, clock } = limiter('5/min');
  for (let i = 0; i < 1000; i++) limit.take(from(`198.51.${i >> 8}.${i & 255}`));
  assert.equal(limit.clients, 1000);
  clock.t += 30_000;
  limit.take(from('203.0.113.1'));
  assert.equal(limit.clients, 1001, 'all still open');
  clock.t += 30_000;
  limit.take(from('203.0.113.2'));
  // The thousand opened at T0 ended at T0 + 60 s; the one of T0 + 30 s has not.
  assert.equal(limit.clients, 2);
});

test('memory: never more windows than the cap; the oldest goes first', () => {
  const { limit, clock } = limiter('1/min', 0, 3);
  for (const address of ['198.51.100.1', '198.51.100.2', '198.51.100.3']) {
    limit.take(from(address));
    clock.t += 1;
  }
  assert.equal(limit.take(from('198.51.100.4')), 0);
  assert.equal(limit.clients, 3);
  // .1 was forgotten (it opened first): it gets a new window; .3 is still counted.
  assert.equal(limit.take(from('198.51.100.3')), 60);
  assert.equal(limit.take(from('198.51.100.1')), 0);
  assert.equal(limit.clients, 3);
});

/**
 * Signing a delivery (Standard Webhooks): judged by the official `standardwebhooks`
 * package, which nobody here wrote, and by the signature vector its own tests publish. A delivery
 * it accepts must stop being accepted when any signed part changes: the body, the id, the
 * timestamp, or the secret it is checked with.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { deliveryHeaders, isSecret, newEventId, newSecret, SECRET_BYTES, signature } from '../../src/webhooks/signing.ts';

/**
 * The oracle refuses a timestamp more than five minutes from its own clock, so the deliveries it
 * judges are signed with the real time, not a fixed one.
 */
const nowS = (): number => Math.floor(Date.now() / 1000);

const BODIES = [
  '{"type":"link.created","timestamp":"2024-03-31T00:00:00Z","data":{"short_code":"abc","domain":null}}',
  '{"type":"link.clicked","timestamp":"2024-03-31T00:00:00Z","data":{"title":"Grüße, 日本語 and 😀"}}',
  '{}',
];

/** The headers of a delivery as a receiver's framework hands them over: an object by name. */
const asObject = (pairs: [string, string][]): Record<string, string> => Object.fromEntries(pairs);

test('the official package verifies every delivery, and gets back the body that was signed', () => {
  for (const body of BODIES) {
    const secret = newSecret();
    const headers = asObject(deliveryHeaders(secret, newEventId(), nowS(), body));
    assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
    assert.deepEqual(new Webhook(secret).verify(Buffer.from(body), headers), JSON.parse(body), 'as the raw bytes a server reads');
  }
});

test('a delivery with any signed part changed fails the official package', () => {
  const secret = newSecret();
  const id = newEventId();
  const timestamp = nowS();
  const body = BODIES[1]!;
  const headers = asObject(deliveryHeaders(secret, id, timestamp, body));
  const refused = /No matching signature found/;
  assert.throws(() => new Webhook(secret).verify(body.replace('link.clicked', 'link.deleted'), headers), refused, 'the body');
  assert.throws(() => new Webhook(secret).verify(`${body} `, headers), refused, 'one space more');
  assert.throws(() => new Webhook(secret).verify(body, { ...headers, 'webhook-id': newEventId() }), refused, 'the id');
  assert.throws(() => new Webhook(secret).verify(body, { ...headers, 'webhook-timestamp': String(timestamp - 1) }), refused, 'the timestamp');
  assert.throws(() => new Webhook(newSecret()).verify(body, headers), refused, 'another secret');
  // The control: the same untouched delivery passes, so the refusals above are the changes' doing.
  assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
});

test('the signature vector of the Standard Webhooks libraries is reproduced', () => {
  // From the "sign function works" test that the JavaScript and Go libraries share.
  assert.equal(
    signature('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}'),
    'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
  );
});

test('the headers are the three webhook-* headers and the JSON content type, in order', () => {
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  assert.deepEqual(deliveryHeaders(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}'), [
    ['webhook-id', 'msg_p5jXN8AQM9LWM0D4loKWxJek'],
    ['webhook-timestamp', '1614265330'],
    ['webhook-signature', 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE='],
    ['content-type', 'application/json'],
  ]);
});

test('a new secret is whsec_ and the base64 of 24 random bytes', () => {
  const secrets = new Set<string>();
  for (let i = 0; i < 100; i++) {
    const secret = newSecret();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{32}$/);
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    assert.equal(key.length, SECRET_BYTES);
    assert.equal(SECRET_BYTES, 24);
    assert.equal(`whsec_${key.toString('base64')}`, secret, 'the base64 is canonical: it decodes and encodes back to itself');
    assert.ok(isSecret(secret));
    secrets.add(secret);
  }
  assert.equal(secrets.size, 100, 'no two alike');
});

test('isSecret takes exactly what newSecret makes', () => {
  const good = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  assert.equal(isSecret(good), true);
  const bad: unknown[] = [
    good.slice('whsec_'.length),
    'whsec_',
    `${good}A`,
    good.slice(0, -1),
    `${good.slice(0, -1)}=`,
    good.replace('whsec_', 'WHSEC_'),
    good.replace('whsec_', 'whsk_'),
    good.replace('Q', '-'),
    good.replace('o', '_'),
    good.replace('o', '.'),
    ` ${good}`,
    `${good}\n`,
    undefined,
    null,
    42,
    { toString: () => good },
  ];
  for (const value of bad) assert.equal(isSecret(value), false, String(value));
});

test('a refused secret is never named in the error', () => {
  const nearly = `whsec_${'S3cr3tK3y'.repeat(4).slice(0, 31)}`;
  assert.throws(
    () => signature(nearly, 'msg_1', 1, '{}'),
    (error: unknown) => error instanceof TypeError && !error.message.includes(nearly.slice(6)) && /whsec_/.test(error.message),
  );
  const secret = newSecret();
  const key = secret.slice('whsec_'.length);
  for (const call of [() => signature(secret, 'msg.1', 1, '{}'), () => signature(secret, 'msg_1', 1.5, '{}'), () => deliveryHeaders(secret, '', 1, '{}')]) {
    assert.throws(call, (error: unknown) => error instanceof Error && !error.message.includes(key) && !String(error.stack).includes(key));
  }
});

test('an id with the delimiter, an empty id and a timestamp that is not whole non-negative seconds are refused', () => {
  const secret = newSecret();
  for (const id of ['msg.1', '', 'msg 1', 'msg_é', 'x'.repeat(129)]) assert.throws(() => signature(secret, id, 1, '{}'), TypeError, JSON.stringify(id));
  for (const timestamp of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53])
    assert.throws(() => signature(secret, 'msg_1', timestamp, '{}'), RangeError);
  assert.match(signature(secret, 'x'.repeat(128), 0, ''), /^v1,[A-Za-z0-9+/]{43}=$/, 'the longest id and the first second are taken');
});

test('an event id is msg_ and a ULID: the time in Crockford base32, then 80 random bits', () => {
  assert.match(newEventId(), /^msg_[0-9A-HJKMNP-TV-Z]{26}$/);
  // The ULID specification's example time, and the two ends of its range.
  assert.equal(newEventId(1469918176385).slice(4, 14), '01ARYZ6S41');
  assert.equal(newEventId(0).slice(4, 14), '0000000000');
  assert.equal(newEventId(2 ** 48 - 1).slice(4, 14), '7ZZZZZZZZZ');
  for (const bad of [-1, 2 ** 48, 1.5, Number.NaN]) assert.throws(() => newEventId(bad), RangeError, String(bad));
  const sameTime = Array.from({ length: 1000 }, () => newEventId(1469918176386));
  assert.equal(new Set(sameTime).size, 1000, 'ids of one millisecond differ in their random part');
  assert.deepEqual([...sameTime].sort(), sameTime, 'and sort in the order they were made (monotonic: counted up from the first)');
  // The first of each millisecond is drawn afresh: random at every position of its random part.
  const firsts = Array.from({ length: 200 }, (_, i) => newEventId(1469918176400 + i).slice(14));
  for (const position of [0, 15]) assert.ok(new Set(firsts.map((t) => t[position])).size > 16, `random characters at ${position} of the random part`);
});

test('event ids sort by the time they were made', () => {
  const times = [0, 1, 31, 32, 1023, 1024, 2 ** 40, 1469918176385, 1711843200000, 1711843200001, 2 ** 48 - 2];
  const ids = times.map((t) => newEventId(t));
  assert.deepEqual([...ids].sort(), ids);
});

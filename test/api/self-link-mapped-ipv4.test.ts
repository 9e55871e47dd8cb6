/**
 * Regression: the self-link check missed `[::ffff:0.0.0.0]` (the WHATWG parser writes it
 * `[::ffff:0:0]`), which a dual-stack socket connects to as `0.0.0.0`, this machine on Linux, so a
 * limited link could redirect to itself until used up (docs/api.md, "No redirect loops"). Every
 * spelling of the unspecified and loopback addresses, IPv4-mapped or not, is this machine; the
 * IPv4-compatible form (`[::127.0.0.1]`, deprecated by RFC 4291) and other mapped addresses are not.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isLoopbackHost, isOwnShortLink } from '../../src/links/url-rules.ts';
import { start } from '../support/helpers.ts';

const BASE = 'http://127.0.0.1:3000';

/** Rows: the host as typed in a URL on the base's port, whether it is this machine. */
const SPELLINGS: readonly [host: string, thisMachine: boolean][] = [
  // The unspecified address, IPv4-mapped: every notation the parser folds into `[::ffff:0:0]`.
  ['[::ffff:0.0.0.0]', true],
  ['[::FFFF:0.0.0.0]', true],
  ['[::ffff:0:0]', true],
  ['[::ffff:0000:0000]', true],
  ['[0:0:0:0:0:ffff:0:0]', true],
  ['[0000:0000:0000:0000:0000:FFFF:0.0.0.0]', true],
  ['[0::ffff:0.0.0.0]', true],
  // The unspecified address itself, in IPv4 and IPv6 notations.
  ['0.0.0.0', true],
  ['0', true],
  ['0x0', true],
  ['0.0.0.0.', true],
  ['[::]', true],
  ['[::0]', true],
  ['[0:0:0:0:0:0:0:0]', true],
  ['[::0.0.0.0]', true],
  // Loopback, IPv4-mapped, in every notation.
  ['[::ffff:127.0.0.1]', true],
  ['[::ffff:7f00:1]', true],
  ['[0:0:0:0:0:ffff:7f00:0001]', true],
  ['[::ffff:127.255.255.254]', true],
  ['[::ffff:127.1.2.3]', true],
  ['[::1]', true],
  ['[::0.0.0.1]', true],
  // Neighbours that are other hosts: another mapped address, the IPv4-compatible and translated
  // forms (routed off the machine, never to it), the NAT64 prefix, an address next to `::`.
  ['[::ffff:0.0.0.1]', false],
  ['[::ffff:0:1]', false],
  ['[::ffff:1.0.0.0]', false],
  ['[::ffff:0]', false],
  ['[::ffff:128.0.0.1]', false],
  ['[::127.0.0.1]', false],
  ['[::7f00:1]', false],
  ['[::ffff:0:7f00:1]', false],
  ['[::ffff:0:0:0]', false],
  ['[64:ff9b::127.0.0.1]', false],
  ['[::2]', false],
  ['0.0.0.1', false],
];

test('every spelling of the unspecified and loopback addresses, IPv4-mapped too, is this machine', () => {
  for (const [host, thisMachine] of SPELLINGS) {
    const url = new URL(`http://${host}:3000/x`);
    assert.equal(isLoopbackHost(url.hostname), thisMachine, `${host} (parsed as ${url.hostname})`);
    assert.equal(isOwnShortLink(url, new URL(BASE)), thisMachine, `${host} under ${BASE}`);
    // On another port it is another service of this machine, whatever the spelling.
    assert.equal(isOwnShortLink(new URL(`http://${host}:3001/x`), new URL(BASE)), false, `${host}:3001`);
  }
});

test('a loopback base spelled [::ffff:0:0] treats every spelling of this machine as itself', () => {
  assert.equal(isOwnShortLink(new URL('http://127.0.0.1:3000/x'), new URL('http://[::ffff:0.0.0.0]:3000')), true);
  assert.equal(isOwnShortLink(new URL('http://[::ffff:0:0]:3000/x'), new URL('http://localhost:3000')), true);
});

test('POST /api/shorten refuses a link to itself through [::ffff:0.0.0.0] (400, the loop reason)', async (t) => {
  const h = await start(t, { apiKeys: ['k'] });
  for (const host of ['[::ffff:0.0.0.0]', '[0:0:0:0:0:ffff:0:0]', '[::ffff:0:0]']) {
    const url = `http://${host}:${h.port}/abc`;
    const r = await h.req('/api/shorten', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url }) });
    assert.equal(r.status, 400, `${url}: ${r.body}`);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.equal(r.body, JSON.stringify({ detail: 'url points at this shortener itself; a short link to a short link would loop' }));
  }
  // Nothing was stored.
  const list = await h.req('/api/urls', { headers: { 'x-api-key': 'k' } });
  assert.equal(list.headers['x-total-count'], '0');
});

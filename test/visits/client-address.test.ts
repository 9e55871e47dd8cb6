/**
 * The client address under `trust_proxy` (docs/architecture.md, the visit classification): the
 * socket's peer with 0 proxies; the N-th `X-Forwarded-For` entry from the right with N, the
 * leftmost when there are fewer; one canonical spelling per address; `null` for an entry that is
 * no address.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import fc from 'fast-check';
import { canonicalAddress, clientAddressEntry, type EntryRange, forwardedRange, MAX_TRUST_PROXY } from '../../src/visits/client-address.ts';
import { sendRaw } from '../support/raw-http.ts';

const SOCKET = '::ffff:10.0.0.2';

/**
 * The client's address as the recorder (client-facts.ts) and the create limit read it: the entry
 * the request names under `trust` proxies, made canonical.
 */
function clientAddress(trust: number, socket: string | undefined, forwarded: string | readonly string[] | undefined): string | null {
  const entry = clientAddressEntry(trust)(socket, forwarded);
  return entry === null ? null : canonicalAddress(entry);
}

/** trust_proxy, the socket's address, X-Forwarded-For as node:http hands it over, the client. */
const CASES: readonly [number, string | undefined, string | undefined, string | null][] = [
  // No proxies: the header is anybody's to write, and ignored.
  [0, '203.0.113.7', '198.51.100.1', '203.0.113.7'],
  [0, SOCKET, undefined, '10.0.0.2'],
  [0, undefined, '198.51.100.1', null],
  // One proxy: the last entry, the one it added.
  [1, SOCKET, '198.51.100.1', '198.51.100.1'],
  [1, SOCKET, '6.6.6.6, 198.51.100.1', '198.51.100.1'],
  [1, SOCKET, 'forged, 198.51.100.1', '198.51.100.1'],
  // Two proxies: the second from the right; fewer entries give the leftmost.
  [2, SOCKET, '6.6.6.6, 198.51.100.1, 10.0.0.9', '198.51.100.1'],
  [2, SOCKET, '198.51.100.1', '198.51.100.1'],
  [10, SOCKET, '198.51.100.1, 10.0.0.9, 10.0.0.8', '198.51.100.1'],
  // No header: a direct connection, its peer is the client.
  [1, SOCKET, undefined, '10.0.0.2'],
  [1, undefined, undefined, null],
  // Spacing as proxies write it.
  [1, SOCKET, '6.6.6.6,198.51.100.1', '198.51.100.1'],
  [1, SOCKET, '  198.51.100.1  ', '198.51.100.1'],
  // One client, one spelling.
  [1, SOCKET, '198.51.100.1:54321', '198.51.100.1'],
  [1, SOCKET, '[2001:DB8::1]:443', '2001:db8::1'],
  [1, SOCKET, '[2001:db8::1]', '2001:db8::1'],
  [1, SOCKET, '2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
  [1, SOCKET, '::ffff:198.51.100.1', '198.51.100.1'],
  [1, SOCKET, '::FFFF:c633:6401', '198.51.100.1'],
  [1, SOCKET, '[::ffff:198.51.100.1]:80', '198.51.100.1'],
  [1, SOCKET, 'fe80::1%eth0', 'fe80::1'],
  [0, '::1', undefined, '::1'],
  // Entries that are no address: unknown, not the proxy's address.
  [1, SOCKET, 'unknown', null],
  [1, SOCKET, '198.51.100.1, ', null],
  [1, SOCKET, 'example.com', null],
  [1, SOCKET, '_hidden', null],
  [1, SOCKET, '198.51.100.256', null],
  [1, SOCKET, '01.2.3.4', null],
  [1, SOCKET, '[2001:db8::1', null],
  [1, SOCKET, '1.2.3.4:80:90', null],
];

test('an array of X-Forwarded-For values is one list, like the joined header', () => {
  assert.equal(clientAddress(2, SOCKET, ['6.6.6.6, 198.51.100.1', '10.0.0.9']), '198.51.100.1');
});

test('each case gives its client address', () => {
  for (const [trust, socket, forwarded, client] of CASES) {
    assert.equal(clientAddress(trust, socket, forwarded), client, `trust_proxy=${trust} socket=${socket} X-Forwarded-For=${forwarded}`);
  }
});

test('a trust_proxy outside 0..10 is refused', () => {
  assert.equal(MAX_TRUST_PROXY, 10);
  for (const n of [-1, 11, 1.5, Number.NaN]) assert.throws(() => clientAddressEntry(n), RangeError, String(n));
});

test('canonical addresses are fixed points', () => {
  for (const [, , , client] of CASES) if (client !== null) assert.equal(canonicalAddress(client), client);
});

test('several X-Forwarded-For headers are read as node:http joins them: one list, in order', async (t) => {
  let seen: { forwarded: string | string[] | undefined; socket: string | undefined } | undefined;
  const server = createServer((req, res) => {
    seen = { forwarded: req.headers['x-forwarded-for'], socket: req.socket.remoteAddress };
    res.end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => server.close());
  // Two header lines, as two proxies that each add a line (not an entry) send them.
  const head = 'GET / HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 6.6.6.6, 198.51.100.1\r\nX-Forwarded-For: 10.0.0.9\r\nConnection: close\r\n\r\n';
  const reply = await sendRaw((server.address() as AddressInfo).port, head);
  assert.equal(reply.responses[0]?.status, 200);
  assert.deepEqual(seen, { forwarded: '6.6.6.6, 198.51.100.1, 10.0.0.9', socket: '127.0.0.1' });
  assert.equal(clientAddress(1, seen.socket, seen.forwarded), '10.0.0.9');
  assert.equal(clientAddress(2, seen.socket, seen.forwarded), '198.51.100.1');
  assert.equal(clientAddress(0, seen.socket, seen.forwarded), '127.0.0.1');
});

test('an IPv6 spelling asked again, remembered or pushed out of the bounded memory, gets the same answer', () => {
  const spellings = Array.from({ length: 5000 }, (_, i) => `2001:DB8:0:0:0:0:${(i >> 8).toString(16)}:${(i & 255).toString(16)}`);
  const first = spellings.map((s) => canonicalAddress(s));
  assert.equal(first[0], '2001:db8::');
  assert.equal(first[4999], '2001:db8::13:87');
  assert.deepEqual(
    spellings.map((s) => canonicalAddress(s)),
    first,
    'the oldest were pushed out and computed again',
  );
  assert.deepEqual(
    spellings.slice(-100).map((s) => canonicalAddress(s)),
    first.slice(-100),
    'the latest are remembered',
  );
  assert.equal(canonicalAddress('::ffff:0:0:1'), canonicalAddress('::ffff:0:0:1'));
});

/** The entry as it was first written: `lastIndexOf` for the commas, then `trim`. */
function referenceEntry(list: string, trust: number): string {
  let end = list.length;
  let start = list.lastIndexOf(',');
  for (let k = 1; k < trust && start !== -1; k++) {
    end = start;
    start = start === 0 ? -1 : list.lastIndexOf(',', start - 1);
  }
  return list.slice(start + 1, end).trim();
}

test('the entry is found where it stands, as lastIndexOf and trim find it, white space of every kind included', () => {
  // Commas, what trim removes (ASCII, Latin-1's no-break space, Unicode's), and what it keeps.
  const pieces = [',', ' ', '\t', '\v', '\u00a0', '\u2007', '\u2028', '\u3000', '\ufeff', '\u200b', '\u0085', '1', '.', ':', 'a', '2001:db8::1', '192.0.2.7'];
  const range: EntryRange = { from: -1, to: -1 };
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 24 }), fc.integer({ min: 1, max: MAX_TRUST_PROXY }), (parts, trust) => {
      const list = parts.join('');
      forwardedRange(list, trust, range);
      assert.equal(list.slice(range.from, range.to), referenceEntry(list, trust), JSON.stringify({ list, trust }));
      assert.equal(clientAddressEntry(trust)(SOCKET, list), referenceEntry(list, trust));
    }),
    { numRuns: 3000 },
  );
});

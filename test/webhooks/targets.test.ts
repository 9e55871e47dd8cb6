/**
 * Where a webhook may be delivered: every forbidden block at both ends and just outside them, in
 * IPv4 and in each IPv6 form that carries IPv4; the subscription URL's refusals; `resolveTarget`
 * over a fake resolver; and `forbiddenReason` against a `BlockList` model. `FC_SEED=<n>` replays.
 */
import assert from 'node:assert/strict';
import { BlockList } from 'node:net';
import { test } from 'node:test';
import fc from 'fast-check';
import { Refusal } from '../../src/links/refusal.ts';
import { checkWebhookUrl, forbiddenReason, type LookupAddress, resolveTarget } from '../../src/webhooks/targets.ts';

const seed = Number(process.env['FC_SEED'] ?? Date.now() % 1e9);

// The reasons, as an admin reads them in the deliveries list.
const [LOOPBACK, NO_ADDRESS, PRIVATE, LINK_LOCAL] = ['a loopback address', 'an unspecified address', 'a private address', 'a link-local address'];
const [METADATA, MULTICAST, DOCS, BENCH] = ['a cloud metadata address', 'a multicast address', 'a documentation address', 'a benchmarking address'];
const [RESERVED, CGN, TEREDO, BROADCAST] = ['a reserved address', 'a carrier-grade NAT address', 'a Teredo tunnel address', 'the broadcast address'];
const F = 'ffff:ffff:ffff:ffff:ffff:ffff';

/**
 * Each block: its reason, its first and last address, and its neighbours with theirs (undefined:
 * allowed; null: none), the more specific first. Read as ranges into `BlockList`s, it is also the
 * model of the property test below, written independently of the source's table of CIDR blocks.
 */
const EDGES: readonly [string, string, string, string | null, string | undefined, string | null, string | undefined][] = [
  // reason, first, last, before, its reason, after, its reason
  [METADATA, '169.254.169.254', '169.254.169.254', '169.254.169.253', LINK_LOCAL, '169.254.169.255', LINK_LOCAL],
  [METADATA, '100.100.100.200', '100.100.100.200', '100.100.100.199', CGN, '100.100.100.201', CGN],
  [METADATA, '192.0.0.192', '192.0.0.192', '192.0.0.191', RESERVED, '192.0.0.193', RESERVED],
  [METADATA, 'fd00:ec2::254', 'fd00:ec2::254', 'fd00:ec2::253', PRIVATE, 'fd00:ec2::255', PRIVATE],
  [METADATA, 'fd20:ce::254', 'fd20:ce::254', 'fd20:ce::253', PRIVATE, 'fd20:ce::255', PRIVATE],
  [BROADCAST, '255.255.255.255', '255.255.255.255', '255.255.255.254', RESERVED, null, undefined],
  [NO_ADDRESS, '0.0.0.0', '0.255.255.255', null, undefined, '1.0.0.0', undefined],
  [PRIVATE, '10.0.0.0', '10.255.255.255', '9.255.255.255', undefined, '11.0.0.0', undefined],
  [CGN, '100.64.0.0', '100.127.255.255', '100.63.255.255', undefined, '100.128.0.0', undefined],
  [LOOPBACK, '127.0.0.0', '127.255.255.255', '126.255.255.255', undefined, '128.0.0.0', undefined],
  [LINK_LOCAL, '169.254.0.0', '169.254.255.255', '169.253.255.255', undefined, '169.255.0.0', undefined],
  [PRIVATE, '172.16.0.0', '172.31.255.255', '172.15.255.255', undefined, '172.32.0.0', undefined],
  [RESERVED, '192.0.0.0', '192.0.0.255', '191.255.255.255', undefined, '192.0.1.0', undefined],
  [DOCS, '192.0.2.0', '192.0.2.255', '192.0.1.255', undefined, '192.0.3.0', undefined],
  [RESERVED, '192.88.99.0', '192.88.99.255', '192.88.98.255', undefined, '192.88.100.0', undefined],
  [PRIVATE, '192.168.0.0', '192.168.255.255', '192.167.255.255', undefined, '192.169.0.0', undefined],
  [BENCH, '198.18.0.0', '198.19.255.255', '198.17.255.255', undefined, '198.20.0.0', undefined],
  [DOCS, '198.51.100.0', '198.51.100.255', '198.51.99.255', undefined, '198.51.101.0', undefined],
  [DOCS, '203.0.113.0', '203.0.113.255', '203.0.112.255', undefined, '203.0.114.0', undefined],
  [MULTICAST, '224.0.0.0', '239.255.255.255', '223.255.255.255', undefined, '240.0.0.0', RESERVED],
  [RESERVED, '240.0.0.0', '255.255.255.254', '239.255.255.255', MULTICAST, '255.255.255.255', BROADCAST],
  [NO_ADDRESS, '::', '::', null, undefined, '::1', LOOPBACK],
  [LOOPBACK, '::1', '::1', '::', NO_ADDRESS, '::2', `${NO_ADDRESS} (0.0.0.2, IPv4-compatible)`],
  [PRIVATE, '64:ff9b:1::', '64:ff9b:1:ffff:ffff:ffff:ffff:ffff', '64:ff9b:0:ffff:ffff:ffff:ffff:ffff', RESERVED, '64:ff9b:2::', RESERVED],
  [TEREDO, '2001::', `2001:0:${F}`, `2000:ffff:${F}`, undefined, '2001:1::', undefined],
  [BENCH, '2001:2::', '2001:2:0:ffff:ffff:ffff:ffff:ffff', `2001:1:${F}`, undefined, '2001:2:1::', undefined],
  [DOCS, '2001:db8::', `2001:db8:${F}`, `2001:db7:${F}`, undefined, '2001:db9::', undefined],
  [DOCS, '3fff::', `3fff:fff:${F}`, `3ffe:ffff:${F}`, undefined, '3fff:1000::', undefined],
  [PRIVATE, 'fc00::', `fdff:ffff:${F}`, `fbff:ffff:${F}`, RESERVED, 'fe00::', RESERVED],
  [LINK_LOCAL, 'fe80::', `febf:ffff:${F}`, `fe7f:ffff:${F}`, RESERVED, 'fec0::', PRIVATE],
  [PRIVATE, 'fec0::', `feff:ffff:${F}`, `febf:ffff:${F}`, LINK_LOCAL, 'ff00::', MULTICAST],
  [MULTICAST, 'ff00::', `ffff:ffff:${F}`, `feff:ffff:${F}`, PRIVATE, null, undefined],
  [RESERVED, '4000::', `fbff:ffff:${F}`, `3fff:ffff:${F}`, undefined, 'fc00::', PRIVATE],
  [RESERVED, '1::', `1fff:ffff:${F}`, `0:ffff:${F}`, RESERVED, '2000::', undefined],
];

test('every forbidden block is forbidden from its first address to its last, its neighbours are judged on their own, and a non-address is refused', () => {
  for (const [reason, first, last, before, beforeReason, after, afterReason] of EDGES) {
    assert.equal(forbiddenReason(first), reason, first);
    assert.equal(forbiddenReason(last), reason, last);
    if (before !== null) assert.equal(forbiddenReason(before), beforeReason, before);
    if (after !== null) assert.equal(forbiddenReason(after), afterReason, after);
  }
  for (const open of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '2a00:1450:4007:80e::200e', '2001:4:112::1'])
    assert.equal(forbiddenReason(open), undefined, open);
});

/** `v4` as the eight hex digits of its 32 bits, `xxxx:xxxx`. */
const hex32 = (v4: string) => `${(number(v4) >>> 16).toString(16)}:${(number(v4) & 0xffff).toString(16)}`;
const FORMS: readonly [string, (v4: string) => string][] = [
  ['IPv4-mapped', (v4) => `::ffff:${v4}`],
  ['IPv4-compatible', (v4) => `::${v4}`],
  ['IPv4-translated', (v4) => `::ffff:0:${hex32(v4)}`],
  ['NAT64', (v4) => `64:ff9b::${v4}`],
  ['6to4', (v4) => `2002:${hex32(v4)}:ffff::1`],
];

test('an IPv4 address carried in IPv6 is judged as that IPv4 address, at every IPv4 edge, in each form', () => {
  const judged = (reason: string | undefined, v4: string, form: string) => reason && `${reason} (${v4}, ${form})`;
  for (const [reason, first, last, before, beforeReason, after, afterReason] of EDGES.filter(([, first]) => !first.includes(':'))) {
    for (const [form, spell] of FORMS) {
      // ::0.0.0.0 and ::0.0.0.1 are IPv6's own :: and ::1, judged below.
      if (form !== 'IPv4-compatible' || first !== '0.0.0.0') assert.equal(forbiddenReason(spell(first)), judged(reason, first, form), spell(first));
      assert.equal(forbiddenReason(spell(last)), judged(reason, last, form), spell(last));
      if (before !== null) assert.equal(forbiddenReason(spell(before)), judged(beforeReason, before, form), spell(before));
      if (after !== null) assert.equal(forbiddenReason(spell(after)), judged(afterReason, after, form), spell(after));
    }
  }
  assert.equal(forbiddenReason('::0.0.0.0'), NO_ADDRESS);
  assert.equal(forbiddenReason('::0.0.0.1'), LOOPBACK);
  assert.equal(forbiddenReason('::0.0.0.2'), `${NO_ADDRESS} (0.0.0.2, IPv4-compatible)`);
  // Just outside each form the address is IPv6 of its own: reserved, or (beside 6to4) allowed.
  for (const outside of ['::1:0:0', '::fffe:ffff:ffff', '::1:0:0:0', '::fffe:ffff:ffff:ffff', '64:ff9b::1:0:0', '64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff']) {
    assert.equal(forbiddenReason(outside), RESERVED, outside);
  }
  assert.equal(forbiddenReason(`2001:ffff:${F}`), undefined);
  assert.equal(forbiddenReason('2003::a00:5'), undefined);
});

test('a zone is ignored and what is no address is refused', () => {
  assert.equal(forbiddenReason('fe80::1%eth0'), LINK_LOCAL);
  for (const bad of ['', 'example.com', '10.0.0.256', '010.0.0.1', '1.2.3', '[::1]', '::1/128', '1:2:3:4:5:6:7:8:9'])
    assert.equal(forbiddenReason(bad), 'not an IP address', bad);
});

test('checkWebhookUrl refuses a bad subscription URL in plain words and returns a good one serialized', () => {
  const long = `https://example.com/${'a'.repeat(2048 - 20)}`;
  assert.equal(long.length, 2048);
  const refused: readonly [unknown, string][] = [
    [undefined, 'url is required'],
    ['', 'url is required'],
    [42, 'url must be a string'],
    ['https://example.com/\0', 'url must not contain a NUL character'],
    ['example.com/hook', 'url must be an absolute URL such as https://example.com/hooks'],
    ['ftp://example.com/hook', 'url must use http or https, not ftp'],
    ['javascript:alert(1)', 'url must use http or https, not javascript'],
    ['https://user:pw@example.com/hook', 'url must not contain a user name or password'],
    ['https://user@example.com/hook', 'url must not contain a user name or password'],
    [`${long}b`, 'url is too long: 2049 characters, the limit is 2048'],
    [`https://example.com/${' '.repeat(2027)}x`, 'url is too long once normalized: 6102 characters, the limit is 2048'],
    ['http://10.0.0.5/hook', 'url points at 10.0.0.5, a private address; only webhook_allow_private allows that'],
    ['http://0x7f.1:8080/', 'url points at 127.0.0.1, a loopback address; only webhook_allow_private allows that'],
    [
      'http://[::ffff:169.254.169.254]/',
      'url points at ::ffff:a9fe:a9fe, a cloud metadata address (169.254.169.254, IPv4-mapped); only webhook_allow_private allows that',
    ],
    ['https://[fd00:ec2::254]/', 'url points at fd00:ec2::254, a cloud metadata address; only webhook_allow_private allows that'],
    ['http://localhost:3000/', 'url points at localhost, this machine; only webhook_allow_private allows that'],
    ['http://hooks.localhost./', 'url points at hooks.localhost., this machine; only webhook_allow_private allows that'],
  ];
  for (const [input, detail] of refused) assert.deepEqual(checkWebhookUrl(input), new Refusal(detail), String(input));
  assert.equal(checkWebhookUrl(long), long);
  assert.equal(checkWebhookUrl('HTTPS://Example.COM:443/a/../hook?x=1'), 'https://example.com/hook?x=1');
  assert.equal(checkWebhookUrl('http://8.8.8.8/hook'), 'http://8.8.8.8/hook');
  assert.equal(checkWebhookUrl('http://[2606:4700::1111]/'), 'http://[2606:4700::1111]/');
  for (const input of ['http://10.0.0.5/hook', 'http://localhost:3000/', 'http://[::1]/']) {
    assert.equal(checkWebhookUrl(input, { allowPrivate: true }), new URL(input).href, input);
  }
  assert.deepEqual(checkWebhookUrl('ftp://10.0.0.5/', { allowPrivate: true }), new Refusal('url must use http or https, not ftp'));
});

/** A resolver that answers from a table, counting its calls; a name it does not know fails as ENOTFOUND. */
function fakeLookup(table: Record<string, LookupAddress[]>) {
  const asked: string[] = [];
  const lookup = async (host: string): Promise<LookupAddress[]> => {
    asked.push(host);
    const answers = table[host];
    if (answers === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return answers;
  };
  return { asked, lookup };
}

const v4 = (address: string): LookupAddress => ({ address, family: 4 });
const v6 = (address: string): LookupAddress => ({ address, family: 6 });
const DNS = {
  'good.example': [v6('2606:4700::1111'), v4('93.184.215.14')],
  'mixed.example': [v4('93.184.215.14'), v4('10.0.0.5'), v4('93.184.215.15')],
  'last.example': [v4('93.184.215.14'), v6('::ffff:169.254.169.254')],
  'empty.example': [],
  'garbage.example': [v4('not-an-address')],
};

const go = (address: string, family: 4 | 6, host: string, port: number) => ({ ok: true, address, family, host, port });
const no = (reason: string) => ({ ok: false, reason });

/** Each case: the URL, `allowPrivate`, what `resolveTarget` answers. */
async function answers(cases: readonly [string, boolean, object][], lookup: (host: string) => Promise<LookupAddress[]>) {
  for (const [url, allowPrivate, expected] of cases) assert.deepEqual(await resolveTarget(url, { allowPrivate, lookup }), expected, url);
}

test('resolveTarget connects to the first address when every address is allowed, resolved afresh each time', async () => {
  const { asked, lookup } = fakeLookup(DNS);
  await answers(
    [
      ['https://good.example/hook', false, go('2606:4700::1111', 6, 'good.example', 443)],
      ['http://good.example:8080/hook', false, go('2606:4700::1111', 6, 'good.example', 8080)],
      ['http://good.example/hook', false, go('2606:4700::1111', 6, 'good.example', 80)],
    ],
    lookup,
  );
  assert.deepEqual(asked, ['good.example', 'good.example', 'good.example']);
});

test('resolveTarget refuses a name with one forbidden address among good ones, wherever it stands, and a failed lookup, never throwing', async () => {
  const { lookup } = fakeLookup(DNS);
  await answers(
    [
      ['https://mixed.example/', false, no('resolves to 10.0.0.5, a private address')],
      ['https://last.example/', false, no('resolves to ::ffff:169.254.169.254, a cloud metadata address (169.254.169.254, IPv4-mapped)')],
      ['https://garbage.example/', true, no('resolves to not-an-address, not an IP address')],
      ['https://nowhere.example/', false, no('could not resolve nowhere.example (ENOTFOUND)')],
      ['https://empty.example/', true, no('empty.example resolves to no address')],
    ],
    lookup,
  );
  const throwsAtOnce = (): Promise<LookupAddress[]> => {
    throw new Error('resolver is closed');
  };
  await answers([['https://good.example/', false, no('could not resolve good.example (resolver is closed)')]], throwsAtOnce);
  await answers([['https://good.example/', false, no('could not resolve good.example (timed out)')]], () => Promise.reject('timed out'));
});

test('resolveTarget checks a literal address without a lookup, and allowPrivate lets every address through', async () => {
  const { asked, lookup } = fakeLookup(DNS);
  await answers(
    [
      ['http://10.0.0.5:9000/', false, no('url points at 10.0.0.5, a private address; only webhook_allow_private allows that')],
      ['http://localhost/', false, no('url points at localhost, this machine; only webhook_allow_private allows that')],
      ['https://[2606:4700::1111]/', false, go('2606:4700::1111', 6, '2606:4700::1111', 443)],
      ['http://10.0.0.5:9000/', true, go('10.0.0.5', 4, '10.0.0.5', 9000)],
      ['http://[::1]/', true, go('::1', 6, '::1', 80)],
      ['ftp://8.8.8.8/', true, no('url must use http or https, not ftp')],
    ],
    lookup,
  );
  assert.deepEqual(asked, [], 'no literal host was looked up');
  await answers([['https://mixed.example/', true, go('93.184.215.14', 4, 'mixed.example', 443)]], lookup);
});

/** The model: the blocks of EDGES as `BlockList` ranges, asked in order; an IPv6 address outside them and 2000::/3 is reserved. */
const model = (family: 'ipv4' | 'ipv6') =>
  EDGES.filter(([, first]) => first.includes(':') === (family === 'ipv6')).map(([reason, first, last]) => {
    const list = new BlockList();
    list.addRange(first, last, family);
    return { reason, list };
  });
const V4_MODEL = model('ipv4');
const V6_MODEL = model('ipv6');
const GLOBAL_UNICAST = new BlockList();
GLOBAL_UNICAST.addSubnet('2000::', 3, 'ipv6');
const judge = (rows: typeof V4_MODEL, address: string, family: 'ipv4' | 'ipv6') => rows.find(({ list }) => list.check(address, family))?.reason;
const judge6 = (text: string) => judge(V6_MODEL, text, 'ipv6') ?? (GLOBAL_UNICAST.check(text, 'ipv6') ? undefined : RESERVED);
const dotted = (n: number) => [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');
const hex = (g: readonly number[]) => g.map((x) => x.toString(16)).join(':');
const number = (v4: string) => v4.split('.').reduce((all, octet) => all * 256 + Number(octet), 0);

/** The model's reason for eight 16-bit groups: an embedded IPv4 address decides for its form. */
function modelReason(g: readonly number[]): string | undefined {
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  const low = (g[6]! * 65536 + g[7]!) >>> 0;
  const forms: [boolean, string, number][] = [
    [zeros(0, 6) && low > 1, 'IPv4-compatible', low],
    [zeros(0, 5) && g[5] === 0xffff, 'IPv4-mapped', low],
    [zeros(0, 4) && g[4] === 0xffff && g[5] === 0, 'IPv4-translated', low],
    [g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6), 'NAT64', low],
    [g[0] === 0x2002, '6to4', (g[1]! * 65536 + g[2]!) >>> 0],
  ];
  const form = forms.find(([holds]) => holds);
  if (form === undefined) return judge6(hex(g));
  const reason = judge(V4_MODEL, dotted(form[2]), 'ipv4');
  return reason && `${reason} (${dotted(form[2])}, ${form[1]})`;
}

/** Each IPv4 block's first and last address, where an off-by-one hides. */
const EDGES_V4 = EDGES.filter(([, first]) => !first.includes(':')).flatMap(([, first, last]) => [number(first), number(last)]);
const word32 = fc.oneof(
  fc.nat({ max: 0xffffffff }),
  fc.tuple(fc.constantFrom(...EDGES_V4), fc.integer({ min: -2, max: 2 })).map(([edge, d]) => (edge + d + 2 ** 32) % 2 ** 32),
);
const group = fc.oneof(fc.constantFrom(0, 1, 0xffff), fc.nat({ max: 0xffff }));
const head = fc.oneof(
  group,
  fc.constantFrom(0x64, 0x2001, 0x2002, 0x1fff, 0x2000, 0x3fff, 0x4000, 0xfbff, 0xfc00, 0xfdff, 0xfe7f, 0xfe80, 0xfebf, 0xfec0, 0xfeff, 0xff00, 0xfd00, 0xfd20),
);
const embedded = fc
  .tuple(fc.constantFrom([0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0xffff], [0, 0, 0, 0, 0xffff, 0], [0x64, 0xff9b, 0, 0, 0, 0], [0x64, 0xff9b, 1, 0, 0, 0]), word32)
  .map(([h, w]) => [...h, w >>> 16, w & 0xffff]);
const groups = fc.oneof(
  fc.tuple(head, group, group, group, group, group, group, group),
  embedded,
  word32.map((w) => [0x2002, w >>> 16, w & 0xffff, 0, 0, 0, 0, 1]),
);
const SPELLINGS: Record<string, (g: readonly number[]) => string> = {
  full: hex,
  short: (g) => new URL(`http://[${hex(g)}]/`).hostname.slice(1, -1),
  upper: (g) => hex(g).toUpperCase(),
  dotted: (g) => `${hex(g.slice(0, 6))}:${dotted((g[6]! * 65536 + g[7]!) >>> 0)}`,
};

test('forbiddenReason agrees with a BlockList model over random addresses in every spelling', () => {
  fc.assert(
    fc.property(word32, (n) => forbiddenReason(dotted(n)) === judge(V4_MODEL, dotted(n), 'ipv4')),
    { numRuns: 3000, seed },
  );
  fc.assert(
    fc.property(groups, fc.constantFrom(...Object.keys(SPELLINGS)), (g, how) => {
      const text = SPELLINGS[how]!(g);
      assert.equal(forbiddenReason(text), modelReason(g), text);
    }),
    { numRuns: 3000, seed },
  );
});

/**
 * The domains of an instance (src/links/domains.ts), without sockets: which host names which
 * domain, how a `domain` a door receives is read, and the store key of `(domain, code)` — one key
 * per pair, read back as the pair, the default domain's keys being the codes themselves.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { badHost, createDomains } from '../../src/links/domains.ts';
import { Refusal } from '../../src/links/refusal.ts';

const domains = createDomains('https://s.example/x', ['Go.Example', 'go.example', 's.example', 'b.example:8443']);

test("the default domain is base_url's host; extra hosts are lower-cased, and one listed twice or the default one counts once", () => {
  assert.equal(domains.defaultHost, 's.example');
  assert.deepEqual(domains.hosts, ['s.example', 'go.example', 'b.example:8443']);
  assert.equal(domains.several, true);
  assert.equal(createDomains('http://localhost:3000').several, false);
  assert.deepEqual(domains.otherBases, ['https://go.example/x', 'https://b.example:8443/x']);
  assert.throws(() => createDomains('https://s.example', ['bad host']), /domains: "bad host" is not a host name/);
});

test('a host names its domain in any case; an unlisted or absent host is the default domain', () => {
  assert.equal(domains.ofHost('go.example'), 'go.example');
  assert.equal(domains.ofHost('GO.example'), 'go.example');
  assert.equal(domains.ofHost('b.example:8443'), 'b.example:8443');
  assert.equal(domains.ofHost('b.example'), null, 'the port is part of the host');
  assert.equal(domains.ofHost('s.example'), null);
  assert.equal(domains.ofHost('other.example'), null);
  assert.equal(domains.ofHost(undefined), null);
});

test("a request's domain is its Host, or with a trusted proxy its X-Forwarded-Host (the first of several)", () => {
  const raw = (...headers: string[]) => ({ rawHeaders: headers, headers: {} });
  assert.equal(domains.ofRequest(raw('Host', 'go.example', 'X-Forwarded-Host', 'b.example:8443')), 'go.example', 'no proxy trusted');
  assert.equal(domains.ofRequest(raw('user-agent', 'x', 'HOST', 'Go.Example')), 'go.example');
  assert.equal(domains.ofRequest(raw('user-agent', 'x')), null);
  const proxied = createDomains('https://s.example/x', ['go.example', 'b.example:8443'], true);
  assert.equal(proxied.ofRequest(raw('Host', 'internal:3000', 'X-Forwarded-Host', 'b.example:8443, go.example')), 'b.example:8443');
  assert.equal(proxied.ofRequest(raw('Host', 'go.example')), 'go.example', 'no X-Forwarded-Host: the Host');
  // A request object without rawHeaders (a test double, a framework's) is read from `headers`.
  assert.equal(proxied.ofRequest({ headers: { host: 'go.example', 'x-forwarded-host': 'b.example:8443' } }), 'b.example:8443');
  assert.equal(domains.ofRequest({ headers: { host: 'GO.EXAMPLE' } }), 'go.example');
  // With one domain nothing is read at all.
  const one = createDomains('https://s.example');
  assert.equal(one.ofRequest(raw('Host', 'go.example')), null);
});

test('a domain as a door names it: absent, empty, default or the default host is the default one; another host is refused', () => {
  for (const none of [undefined, null, '', 'default', 'DEFAULT', 'S.EXAMPLE']) assert.equal(domains.named(none), null, String(none));
  assert.equal(domains.named('GO.example'), 'go.example');
  const refused = domains.named('x.example');
  assert.ok(refused instanceof Refusal);
  assert.equal(refused.detail, "domain must be one of this service's domains (s.example, go.example, b.example:8443), or absent for the default one");
  assert.equal((domains.named(7) as Refusal).detail, 'domain must be a text');
  assert.deepEqual(domains.keyOf('abc', 'x.example'), { ok: false, error: 'invalid', detail: refused.detail });
  assert.deepEqual(domains.keyOf('a/b', 'go.example'), { ok: false, error: 'not_found' }, 'a code outside the alphabet names no link');
});

test('the store key of (domain, code): the code on the default domain, else <host>/<code>; read back as the pair, with its short URL', () => {
  assert.equal(domains.keyOf('abc', undefined), 'abc');
  assert.equal(domains.keyOf('abc', 'Go.Example'), 'go.example/abc');
  assert.equal(domains.shortUrl('abc'), 'https://s.example/x/abc');
  assert.equal(domains.shortUrl('b.example:8443/abc'), 'https://b.example:8443/x/abc');
  const code = fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/);
  const domain = fc.constantFrom(null, ...domains.hosts.slice(1));
  fc.assert(
    fc.property(code, domain, code, domain, (c1, d1, c2, d2) => {
      const key = domains.key(c1, d1);
      assert.equal(domains.codeOf(key), c1);
      assert.equal(domains.domainOf(key), d1);
      // One key per pair.
      assert.equal(key === domains.key(c2, d2), c1 === c2 && d1 === d2);
    }),
  );
});

test('what a host may be: a DNS name or an IPv4 address, lower case, with an optional port', () => {
  for (const good of ['go.example', 'a-b.c', '127.0.0.1', 'x.example:8080', 'localhost']) assert.equal(badHost(good), undefined, good);
  for (const bad of ['', 'Go.example', 'a b', 'a/b', '-a.example', 'a.example:', 'a.example:123456', 'a..b', `${'a'.repeat(260)}.example`])
    assert.match(badHost(bad) ?? '', /is not a host name/, bad);
});

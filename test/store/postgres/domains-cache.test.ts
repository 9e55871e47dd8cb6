/**
 * The copy of the domains' own redirects (src/store/postgres/domains.ts) when its reads end out of
 * order or around a change of this instance. No database here: each statement is answered by
 * hand, in the order each test chooses; the HTTP and conformance tests run it against a server.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { DomainRedirects } from '../../../src/store/domain-store.ts';
import { PostgresDomains } from '../../../src/store/postgres/domains.ts';
import { callsByHand } from '../../support/calls-by-hand.ts';

const T = 1_790_000_000_000;
const row = (host: string, notFound: string) => ({ host, base_url: null, not_found: notFound, expired: null });
const OLD = [row('go.example', 'https://example.com/old')];
const NEW = [row('go.example', 'https://example.com/new')];
const notFoundOf = (m: ReadonlyMap<string, DomainRedirects>) => m.get('go.example')?.notFound;

/** Domains whose every statement waits until the test answers it (`callsByHand`). */
function domainsAnsweredByHand(clock: () => number) {
  const { sql, calls, answer, asked } = callsByHand();
  return { domains: new PostgresDomains(sql, calls, clock, 1000), answer, asked };
}

test('a read begun before a change of this instance, answered after it, is not what this instance then serves', async () => {
  const { domains, answer, asked } = domainsAnsweredByHand(() => T);
  const before = domains.domainRedirects();
  const change = domains.setDomainRedirects('go.example', { baseUrl: null, notFound: 'https://example.com/new', expired: null });
  await answer(1, []);
  await change;
  // The read began before the change and is answered after it, with what it saw then.
  await answer(0, OLD);
  assert.equal(notFoundOf(await before), 'https://example.com/old', 'its own caller gets what it read');
  const after = domains.domainRedirects();
  assert.ok(after instanceof Promise, 'the next caller reads again');
  assert.equal(asked(), 3);
  await answer(2, NEW);
  assert.equal(notFoundOf(await after), 'https://example.com/new');
  assert.equal(notFoundOf(domains.domainRedirects() as ReadonlyMap<string, DomainRedirects>), 'https://example.com/new', 'then from memory');
});

test('a caller after a change of this instance does not wait on a read begun before it', async () => {
  const { domains, answer, asked } = domainsAnsweredByHand(() => T);
  const before = domains.domainRedirects();
  const change = domains.setDomainRedirects('go.example', { baseUrl: null, notFound: 'https://example.com/new', expired: null });
  await answer(1, []);
  await change;
  const after = domains.domainRedirects();
  assert.equal(asked(), 3, 'a read of its own');
  await answer(2, NEW);
  await answer(0, OLD);
  assert.equal(notFoundOf(await after), 'https://example.com/new');
  assert.equal(notFoundOf(await before), 'https://example.com/old');
  assert.equal(notFoundOf(domains.domainRedirects() as ReadonlyMap<string, DomainRedirects>), 'https://example.com/new', 'the copy is the later read');
});

test("the admin's read beside a redirect's: whichever began last is the copy, whatever the order of answers", async () => {
  let clock = T;
  const { domains, answer, asked } = domainsAnsweredByHand(() => clock);
  const shared = domains.domainRedirects();
  clock += 10;
  const fresh = domains.domainRedirects(true);
  assert.equal(asked(), 2);
  await answer(1, NEW);
  await answer(0, OLD);
  await Promise.all([shared, fresh]);
  assert.equal(notFoundOf(domains.domainRedirects() as ReadonlyMap<string, DomainRedirects>), 'https://example.com/new');
  assert.equal(asked(), 2, 'from memory');
});

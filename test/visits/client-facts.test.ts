/**
 * What the recorder remembers of today's clients (client-facts.ts): the same hashes, families and
 * countries as computed afresh, each computed once per value and day, bounded, and forgotten
 * when the day changes.
 */
import assert from 'node:assert/strict';
import { createSecretKey } from 'node:crypto';
import { test } from 'node:test';
import { ClientFacts } from '../../src/visits/client-facts.ts';
import { classifyUserAgent } from '../../src/visits/user-agent.ts';
import { addressHash, agentHash, KEY_BYTES } from '../../src/visits/visitor-id.ts';

const keyA = createSecretKey(Buffer.alloc(KEY_BYTES, 1));
const keyB = createSecretKey(Buffer.alloc(KEY_BYTES, 2));
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

function facts(max?: number): { clients: ClientFacts; classified: (string | undefined)[]; asked: string[]; db: { current: object } } {
  const classified: (string | undefined)[] = [];
  const asked: string[] = [];
  const db = { current: {} };
  const clients = new ClientFacts({
    classify: (ua) => {
      classified.push(ua);
      return classifyUserAgent(ua ?? '');
    },
    countryOf: (address) => {
      asked.push(address);
      return address.startsWith('198.51.100.') ? 'DE' : null;
    },
    countries: () => db.current,
    ...(max !== undefined && { max }),
  });
  return { clients, classified, asked, db };
}

test('the facts are what computing them afresh gives: families, the canonical address, its country, both hashes', () => {
  const { clients } = facts();
  clients.startDay(100);
  const agent = clients.agent(CHROME, keyA);
  assert.deepEqual(agent.families, classifyUserAgent(CHROME));
  assert.equal(agent.hash, agentHash(keyA, CHROME));
  assert.equal(clients.agent(undefined, keyA).hash, agentHash(keyA, undefined));
  const v4 = clients.address('198.51.100.7:5555', keyA);
  assert.deepEqual([v4.address, v4.country, v4.hash], ['198.51.100.7', 'DE', addressHash(keyA, '198.51.100.7')]);
  // Two spellings of one address: one canonical address, one hash.
  assert.equal(clients.address('[2001:DB8::1]:443', keyA).hash, clients.address('2001:db8:0::1', keyA).hash);
  assert.equal(clients.address('2001:db8::1', keyA).hash, addressHash(keyA, '2001:db8::1'));
});

test('an entry that is no address has no country and no hash, and asks the database nothing', () => {
  const { clients, asked } = facts();
  clients.startDay(100);
  const none = clients.address('unknown', keyA);
  assert.deepEqual([none.address, none.country, none.hash], [null, null, undefined]);
  assert.deepEqual(asked, []);
});

test('each value is classified, located and hashed once a day; without the key it is hashed once the key is there', () => {
  const { clients, classified, asked, db } = facts();
  clients.startDay(100);
  assert.equal(clients.agent(CHROME, undefined).hash, undefined, 'no key yet');
  assert.equal(clients.address('198.51.100.7', undefined).hash, undefined);
  assert.equal(clients.agent(CHROME, keyA).hash, agentHash(keyA, CHROME), 'hashed once the key is at hand');
  assert.equal(clients.address('198.51.100.7', keyA).hash, addressHash(keyA, '198.51.100.7'));
  // Asked again the same day under another key object, the remembered hashes answer: no HMAC again.
  assert.equal(clients.agent(CHROME, keyB).hash, agentHash(keyA, CHROME));
  assert.equal(clients.address('198.51.100.7', keyB).hash, addressHash(keyA, '198.51.100.7'));
  assert.deepEqual(classified, [CHROME]);
  assert.deepEqual(asked, ['198.51.100.7']);
  // A reloaded country database is asked again, once.
  db.current = {};
  clients.address('198.51.100.7', keyA);
  clients.address('198.51.100.7', keyA);
  assert.deepEqual(asked, ['198.51.100.7', '198.51.100.7']);
});

test('bounded: a flood of new values pushes the old ones out; the next day nothing of the last one is kept', () => {
  const { clients, classified } = facts(2);
  clients.startDay(100);
  for (let i = 1; i <= 10; i++) clients.address(`192.0.2.${i}`, keyA);
  assert.ok(clients.size <= 4, `at most twice the bound: ${clients.size}`);
  // The first address was pushed out: hashed again, now under key B.
  assert.equal(clients.address('192.0.2.1', keyB).hash, addressHash(keyB, '192.0.2.1'));
  clients.agent(CHROME, keyA);
  clients.startDay(100);
  assert.equal(clients.agent(CHROME, keyB).hash, agentHash(keyA, CHROME), 'the same day keeps them');
  clients.startDay(101);
  assert.equal(clients.size, 0);
  assert.equal(clients.agent(CHROME, keyB).hash, agentHash(keyB, CHROME));
  assert.deepEqual(classified, [CHROME, CHROME]);
});

test('an address read where it stands in a list gives what the same address alone gives, and is made a string only when new', () => {
  const { clients, asked } = facts();
  clients.startDay(100);
  const list = '203.0.113.9, 198.51.100.7 ,[2001:DB8::1]:443,unknown';
  const at = (entry: string) => [list.indexOf(entry), list.indexOf(entry) + entry.length] as const;
  for (const entry of ['198.51.100.7', '[2001:DB8::1]:443', 'unknown', '203.0.113.9']) {
    const [from, to] = at(entry);
    const inList = clients.addressIn(list, from, to, keyA);
    const alone = clients.address(entry, keyA);
    assert.deepEqual([inList.country, inList.hash], [alone.country, alone.hash], entry);
  }
  const [from, to] = at('198.51.100.7');
  assert.deepEqual([clients.addressIn(list, from, to, keyA).country, clients.addressIn(list, from, to, keyA).hash], ['DE', addressHash(keyA, '198.51.100.7')]);
  // An IPv4 address the table knows is located and hashed once: the list is never asked about again.
  assert.deepEqual(asked, ['198.51.100.7', '2001:db8::1', '203.0.113.9']);
});

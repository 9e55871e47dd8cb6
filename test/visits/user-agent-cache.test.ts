/**
 * The classifier's cache (docs/architecture.md, the visit classification): a string seen before
 * is answered from the cache with the very object of its first answer, the cache never holds more
 * than its bound (the oldest string goes first), and strings no browser would send are answered
 * without being kept.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyUserAgent, createUserAgentClassifier, MAX_CACHED_LENGTH, NO_USER_AGENT, type UserAgentClass } from '../../src/visits/user-agent.ts';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

/** A classifier whose computations are counted, per string. */
function counted(max: number): { classify: (ua: string | undefined) => UserAgentClass; computed: Map<string, number> } {
  const computed = new Map<string, number>();
  const classify = createUserAgentClassifier(max, (ua) => {
    computed.set(ua, (computed.get(ua) ?? 0) + 1);
    return classifyUserAgent(ua);
  });
  return { classify, computed };
}

test('the same string gives the identical object, computed once', () => {
  const { classify, computed } = counted(8);
  const first = classify(CHROME);
  for (let i = 0; i < 100; i++) assert.equal(classify(CHROME), first);
  assert.deepEqual({ ...first }, { browser: 'Chrome', os: 'Windows', device: 'desktop', bot: false });
  assert.ok(Object.isFrozen(first));
  assert.equal(computed.get(CHROME), 1);
});

test('the bound holds: past it the oldest string is computed again, the newer ones are not', () => {
  const max = 4;
  const { classify, computed } = counted(max);
  const agents = Array.from({ length: max + 1 }, (_, i) => `curl/8.${i}.0`);
  for (const ua of agents) classify(ua);
  // The fifth string pushed out the first; the other four are still there.
  for (const ua of agents.slice(1)) classify(ua);
  assert.deepEqual([...computed.values()], [1, 1, 1, 1, 1]);
  classify(agents[0]);
  assert.equal(computed.get(agents[0]!), 2);
  // ... which in turn pushed out the second, the oldest now.
  classify(agents[2]);
  classify(agents[1]);
  assert.deepEqual([...computed.values()], [2, 2, 1, 1, 1]);
});

test('a string longer than the cached length is answered and not kept', () => {
  const { classify, computed } = counted(8);
  const long = `${CHROME} ${'x'.repeat(MAX_CACHED_LENGTH)}`;
  assert.deepEqual({ ...classify(long) }, { browser: 'Chrome', os: 'Windows', device: 'desktop', bot: false });
  classify(long);
  assert.equal(computed.get(long), 2);
  const exact = CHROME.padEnd(MAX_CACHED_LENGTH, ' ');
  classify(exact);
  classify(exact);
  assert.equal(computed.get(exact), 1);
});

test('no User-Agent is answered without the cache', () => {
  const { classify, computed } = counted(8);
  assert.equal(classify(undefined), NO_USER_AGENT);
  assert.equal(computed.size, 0);
});

test('a cache size that is no positive integer is refused', () => {
  for (const max of [0, -1, 1.5, Number.NaN]) assert.throws(() => createUserAgentClassifier(max), RangeError, String(max));
});

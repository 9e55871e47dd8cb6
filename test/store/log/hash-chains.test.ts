/**
 * `HashChains.build`, the index build of a start from the checkpoint and of a keydir's growth: the
 * chains it leaves are exactly those of linking the slots one by one, oldest first.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BuildScratch, HashChains, NONE } from '../../../src/store/log/hash-chains.ts';
import { prng } from '../../support/crash-harness.ts';

/** Every chain, as the list of its slots from its head. */
function chains(c: HashChains, capacity: number): number[][] {
  const all: number[][] = [];
  for (let bucket = 0; bucket < capacity; bucket++) {
    const chain: number[] = [];
    for (let s = c.first(bucket); s !== NONE; s = c.after(s)) chain.push(s);
    all.push(chain);
  }
  return all;
}

for (const capacity of [1024, 1 << 18]) {
  test(`build leaves the chains that linking one by one leaves (capacity ${capacity}: ${Math.max(1, capacity >> 16)} part(s) of the heads)`, () => {
    const random = prng(capacity);
    // Live slots with gaps (dead ones are not linked), and hashes that often share a bucket.
    const slots: number[] = [];
    for (let s = 0; s < capacity * 0.75; s++) if (random() < 0.8) slots.push(s);
    const hashes = Uint32Array.from(slots, () => Math.floor(random() * 2 ** 32) % (capacity * 3));
    const one = new HashChains(capacity);
    slots.forEach((s, i) => {
      one.link(s, hashes[i]!);
    });
    const built = HashChains.build(capacity, Int32Array.from(slots), hashes);
    const expected = chains(one, capacity);
    assert.ok(
      expected.some((chain) => chain.length >= 3),
      'some chains hold several slots',
    );
    assert.deepEqual(chains(built, capacity), expected);
  });
}

test('build over every slot from 0 (no slot list), twice over one scratch, leaves what linking one by one leaves', () => {
  const capacity = 1 << 17;
  const random = prng(7);
  const n = Math.floor(capacity * 0.7);
  const scratch = new BuildScratch(n);
  for (const spread of [capacity * 3, 50]) {
    const hashes = Uint32Array.from({ length: n }, () => Math.floor(random() * 2 ** 32) % spread);
    const one = new HashChains(capacity);
    hashes.forEach((h, s) => {
      one.link(s, h);
    });
    // The second build sorts into the scratch the first one filled.
    assert.deepEqual(chains(HashChains.build(capacity, undefined, hashes, scratch), capacity), chains(one, capacity));
  }
});

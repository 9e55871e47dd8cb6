/**
 * The keydir's two indexes (code → slot, URL → slots): chained hash tables over slot numbers, in
 * two Int32Arrays, so that an index costs 4 bytes a slot plus its heads and nothing for the garbage
 * collector to trace.
 *
 * The hashes are seeded per keydir (a random seed, kept in the start-up checkpoint with the URL
 * hashes it copies, `checkpoint.ts`): without the seed, anyone who can create links could pick URLs that
 * all land in one chain and make every lookup of them walk it.
 */
import { randomBytes } from 'node:crypto';

/** No slot: the end of a chain. */
export const NONE = -1;

/** Heads in a part of `HashChains.build`: 2^16 of them, 256 KB, which a core's cache holds. */
const HEADS_PER_PART_LOG2 = 16;

/**
 * FNV-1a, seeded: a seed is the hash of nothing, `hashStep` adds a byte, and `>>> 0` ends it. The
 * random bits are folded into a 32-bit integer once, so a hash starts from a small integer.
 */
export function newSeed(): number {
  return randomBytes(4).readInt32LE(0) ^ 0x811c9dc5;
}

export function hashStep(h: number, byte: number): number {
  return Math.imul(h ^ byte, 0x01000193);
}

/** The hash of a latin1 string's char codes (codes): `hashBytes` of its latin1 bytes. */
export function hashString(s: string, seed: number): number {
  let h = seed;
  for (let i = 0; i < s.length; i++) h = hashStep(h, s.charCodeAt(i));
  return h >>> 0;
}

export function hashBytes(buf: Uint8Array, start: number, end: number, seed: number): number {
  let h = seed;
  for (let i = start; i < end; i++) h = hashStep(h, buf[i]!);
  return h >>> 0;
}

/** The arrays of a `HashChains`, as the start-up checkpoint keeps them (`checkpoint-chains.ts`). */
export interface ChainsImage {
  heads: Int32Array;
  next: Int32Array;
}

/** What `HashChains.build` sorts into: room for `n` slots and their hashes. */
export class BuildScratch {
  readonly slots: Int32Array;
  readonly hashes: Uint32Array;

  constructor(n: number) {
    this.slots = new Int32Array(n);
    this.hashes = new Uint32Array(n);
  }
}

/**
 * Slots chained by hash, newest first in every chain (a slot is linked at its chain's head). Sized
 * for a slot capacity (a power of two), with as many heads: slots fill from half the capacity to all
 * of it, so a chain holds 1.25 to 1.5 slots on average where found (twice as many heads would be
 * 8 bytes more a link for a quarter of a slot less to skip). Grown by building a new one with
 * every live slot linked again (`build`).
 */
export class HashChains {
  private readonly heads: Int32Array;
  private readonly next: Int32Array;
  private readonly mask: number;

  /** Empty chains for `capacity` slots; or the chains of `image` (arrays of `capacity`, taken as they are). */
  constructor(capacity: number, image?: ChainsImage) {
    this.heads = image?.heads ?? new Int32Array(capacity).fill(NONE);
    this.next = image?.next ?? new Int32Array(capacity);
    this.mask = capacity - 1;
  }

  /** The arrays themselves (not copies): what a checkpoint writes. */
  image(): ChainsImage {
    return { heads: this.heads, next: this.next };
  }

  /**
   * Chains with the slots `slots` (ascending; undefined: 0 to n - 1, n the number of hashes)
   * linked, of hashes `hashes` (one each), as `link` one by one would leave them: each chain newest
   * first. Linking ten million slots one by one misses the processor's cache twice a slot (a random
   * head, read and written), a second in all; here they are first sorted by the part of the heads
   * their hash falls in (a counting sort, which keeps their order), then linked part by part, each
   * part's heads small enough to stay cached. `scratch` (two arrays of n) holds the sorted slots
   * and hashes: one pair for both indexes of a keydir, as fresh memory costs its first touch.
   */
  static build(capacity: number, slots: Int32Array | undefined, hashes: Uint32Array, scratch = new BuildScratch(hashes.length)): HashChains {
    const chains = new HashChains(capacity);
    const { heads, next, mask } = chains;
    const n = hashes.length;
    const bits = Math.log2(capacity);
    const shift = Math.min(bits, HEADS_PER_PART_LOG2);
    const parts = 1 << (bits - shift);
    const start = new Int32Array(parts + 1);
    for (let i = 0; i < n; i++) {
      const part = ((hashes[i]! & mask) >>> shift) + 1;
      start[part] = start[part]! + 1;
    }
    for (let p = 0; p < parts; p++) start[p + 1] = start[p + 1]! + start[p]!;
    const sortedSlots = scratch.slots;
    const sortedHashes = scratch.hashes;
    for (let i = 0; i < n; i++) {
      const h = hashes[i]!;
      const part = (h & mask) >>> shift;
      const at = start[part]!;
      start[part] = at + 1;
      sortedSlots[at] = slots === undefined ? i : slots[i]!;
      sortedHashes[at] = h;
    }
    for (let i = 0; i < n; i++) {
      const s = sortedSlots[i]!;
      const bucket = sortedHashes[i]! & mask;
      next[s] = heads[bucket]!;
      heads[bucket] = s;
    }
    return chains;
  }

  /** The newest slot in the chain of hash `h`, or `NONE`. */
  first(h: number): number {
    return this.heads[h & this.mask]!;
  }

  /** The slot after `s` in its chain (an older one), or `NONE`. */
  after(s: number): number {
    return this.next[s]!;
  }

  /** Puts slot `s`, of hash `h`, at the head of its chain. */
  link(s: number, h: number): void {
    const bucket = h & this.mask;
    this.next[s] = this.heads[bucket]!;
    this.heads[bucket] = s;
  }

  /**
   * Puts slot `s`, of hash `h`, into its chain after every newer (higher) slot: an edited link that
   * joins another chain keeps the chain newest first.
   */
  linkInOrder(s: number, h: number): void {
    const { heads, next } = this;
    const bucket = h & this.mask;
    let at = heads[bucket]!;
    if (at === NONE || at < s) {
      next[s] = at;
      heads[bucket] = s;
      return;
    }
    while (next[at]! !== NONE && next[at]! > s) at = next[at]!;
    next[s] = next[at]!;
    next[at] = s;
  }

  /** Takes slot `s`, of hash `h`, out of its chain. */
  unlink(s: number, h: number): void {
    const { heads, next } = this;
    const bucket = h & this.mask;
    let at = heads[bucket]!;
    if (at === s) {
      heads[bucket] = next[s]!;
      return;
    }
    while (at !== NONE) {
      const after = next[at]!;
      if (after === s) {
        next[at] = next[s]!;
        return;
      }
      at = after;
    }
  }
}

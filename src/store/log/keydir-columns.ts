/**
 * The keydir's storage (see `keydir.ts`): the columns a slot's values sit in, the arena of code and
 * URL bytes, the two hash indexes over them and the walks they give (the slots of a URL, every live
 * slot oldest first), and how all of it grows and is squeezed by `vacuum`.
 *
 * Its own file because it is the part that knows the layout: `Keydir` extends this class (through
 * `KeydirImage`, the checkpoint's copy of it, and `KeydirVisits`, a slot's counts and events) and
 * reads the same fields directly (no extra object or call between a lookup and its columns), while
 * the growth, the renumbering and the rebuild of the indexes, none of which a lookup runs, live here.
 */
import { WebhookTable } from './webhook-table.ts';
import { OrphanTable } from './orphan-log.ts';
import { DomainTable } from './domain-format.ts';
import { LinkEvents } from './link-events.ts';
import { BuildScratch, HashChains, hashBytes, newSeed, NONE } from './hash-chains.ts';
import { HotUrls } from './hot-urls.ts';
import { KeyTable } from './key-table.ts';
import type { SlotLabels } from './link-labels.ts';

/** A slot's flag: it holds a live record. */
export const LIVE = 1;
/** The visit count differs from the last one written to the log (see `VisitCounts.flush`). */
export const DIRTY = 2;

/** Arena offsets fit 32 bits up to here; past it the column becomes 64-bit (`reserveBytes`). */
export const OFFSET32_MAX = 2 ** 32;

/** A copy of `a` of `size` entries (the rest zero). */
export function grown<T extends Float64Array | Uint32Array | Int32Array | Uint8Array>(a: T, size: number): T {
  const b = new (a.constructor as new (n: number) => T)(size);
  b.set(a.subarray(0, Math.min(a.length, size)));
  return b;
}

/** Slot capacity for `live` slots: a power of two with a quarter to spare. */
export function capacityFor(live: number): number {
  return Math.max(1024, 2 ** Math.ceil(Math.log2(live * 1.25 + 1)));
}

export abstract class KeydirColumns {
  /** Slots handed out, live or dead. */
  protected slots = 0;
  protected live = 0;
  protected arena: Buffer;
  protected used = 0;
  /** The hashes' seed (`hash-chains.ts`): random, or the one a checkpoint's chains were built with. */
  protected seed = newSeed();
  // One entry per slot. The code's bytes start at `offset`, the URL's right after them: 32-bit
  // offsets while the arena is under 4 GiB (about 45 million links), 64-bit past that. (Widened
  // once, the column stays wide; until then every read of it sees one type.)
  protected offset: Uint32Array | Float64Array;
  protected codeLen: Uint32Array;
  protected urlLen: Uint32Array;
  /** Unix seconds: 32 bits until a time past 2106 (or a hand-written one) needs 64. */
  protected created: Uint32Array | Float64Array;
  protected retention: Uint32Array;
  /** The visit events of each slot (`link-events.ts`). */
  events = new LinkEvents();
  /**
   * Visits counted without an event (`LinkRecord.untracked`). The visit count is not a column of
   * its own: it is these plus the slot's events (`Keydir.visits`), 8 bytes a link fewer.
   */
  protected untrackedCount: Float64Array;
  /** Counted visits allowed; 0 = no limit (a limit is 1..2147483647, so 0 is free to mean none). */
  protected limit: Uint32Array;
  protected flags: Uint8Array;
  /**
   * The URL's hash, which a URL's chain is found by when the slot leaves it. A code's is not kept:
   * a code is a few bytes, hashed again when needed (`codeHashOf`); a lookup compares lengths and
   * bytes, which it reads anyway.
   */
  protected urlHash: Uint32Array;
  protected codeChains: HashChains;
  protected urlChains: HashChains;

  /** See `Keydir.redirectUrl`. */
  protected readonly hot = new HotUrls();
  /**
   * The labels of the slots that have any, by slot (`link-labels.ts`): a link without a title, tags
   * or an author costs nothing here. A dead slot keeps its labels until `vacuum`, like its bytes
   * (an open snapshot still reads it).
   */
  protected labelled = new Map<number, SlotLabels>();
  /** The stored API keys (`key-table.ts`): not the links', but read and rewritten with them. */
  accessKeys = new KeyTable();
  /** The domains' redirects (`domain-format.ts`), which go wherever the keydir goes, like the keys. */
  domains = new DomainTable();
  /** The orphan visits (`orphan-log.ts`), likewise. */
  orphans = new OrphanTable();
  /** The webhooks' subscriptions and outbox (`webhook-table.ts`), likewise. */
  webhooks = new WebhookTable();

  /** `arenaBytes`: room for codes and URLs to start with (what is never written is never resident). */
  constructor(capacity = 1024, arenaBytes = capacity * 64) {
    this.arena = Buffer.allocUnsafe(arenaBytes);
    this.offset = new Uint32Array(capacity);
    this.codeLen = new Uint32Array(capacity);
    this.urlLen = new Uint32Array(capacity);
    this.created = new Uint32Array(capacity);
    this.retention = new Uint32Array(capacity);
    this.untrackedCount = new Float64Array(capacity);
    this.limit = new Uint32Array(capacity);
    this.flags = new Uint8Array(capacity);
    this.urlHash = new Uint32Array(capacity);
    this.codeChains = new HashChains(capacity);
    this.urlChains = new HashChains(capacity);
  }

  /** Live records. */
  get size(): number {
    return this.live;
  }

  /** Slots in use, dead ones included: what `vacuum` would reclaim is `end - size`. */
  get end(): number {
    return this.slots;
  }

  /** Room for one more slot and `bytes` more arena bytes; returns the new slot's number. */
  protected reserve(bytes: number): number {
    this.reserveBytes(bytes);
    if (this.slots === this.offset.length) this.resize(this.slots * 2);
    return this.slots++;
  }

  protected reserveBytes(bytes: number): void {
    if (this.used + bytes > OFFSET32_MAX && this.offset instanceof Uint32Array) this.offset = Float64Array.from(this.offset);
    if (this.used + bytes > this.arena.length) {
      const arena = Buffer.allocUnsafe(Math.max(this.arena.length * 2, this.used + bytes));
      this.arena.copy(arena, 0, 0, this.used);
      this.arena = arena;
    }
  }

  protected fill(
    s: number,
    at: number,
    codeBytes: number,
    urlBytes: number,
    codeHash: number,
    createdAt: number,
    retentionDays: number,
    visits: number,
    maxVisits: number,
  ): number {
    this.used = at + codeBytes + urlBytes;
    // A slot number is reused only after `vacuum`, which empties the cache; this keeps it exact anyway.
    this.hot.forget(s);
    this.labelled.delete(s);
    this.offset[s] = at;
    this.codeLen[s] = codeBytes;
    this.urlLen[s] = urlBytes;
    if (createdAt > 0xffffffff && this.created instanceof Uint32Array) this.created = Float64Array.from(this.created);
    this.created[s] = createdAt;
    this.retention[s] = retentionDays;
    // A create's count has no events (yet): all of it is untracked.
    this.untrackedCount[s] = visits;
    this.limit[s] = maxVisits;
    this.flags[s] = LIVE;
    this.urlHash[s] = hashBytes(this.arena, at + codeBytes, at + codeBytes + urlBytes, this.seed);
    this.codeChains.link(s, codeHash);
    this.urlChains.link(s, this.urlHash[s]!);
    this.live++;
    return s;
  }

  /**
   * Whether slot `s`'s key is of a domain (links/domains.ts): `prefix` null, the default one (no
   * `/` in the key); else the bytes `<host>/` it starts with. Read on the stored bytes.
   */
  inDomain(s: number, prefix: Uint8Array | null): boolean {
    const at = this.offset[s]!;
    const len = this.codeLen[s]!;
    if (prefix === null) {
      for (let i = at; i < at + len; i++) if (this.arena[i] === 0x2f) return false;
      return true;
    }
    if (len <= prefix.length) return false;
    for (let i = 0; i < prefix.length; i++) if (this.arena[at + i] !== prefix[i]) return false;
    return true;
  }

  /** The hash of slot `s`'s code, from its bytes. */
  protected codeHashOf(s: number): number {
    const at = this.offset[s]!;
    return hashBytes(this.arena, at, at + this.codeLen[s]!, this.seed);
  }

  /** Live slots with this URL, newest first. */
  *slotsWithUrl(url: string): Generator<number> {
    const bytes = Buffer.from(url, 'utf8');
    const h = hashBytes(bytes, 0, bytes.length, this.seed);
    // Chains are newest first: a slot is linked at the head when added, and `rehash` keeps the order.
    const chains = this.urlChains;
    for (let s = chains.first(h); s !== NONE; s = chains.after(s)) {
      if (this.urlHash[s] !== h || this.urlLen[s] !== bytes.length) continue;
      const at = this.offset[s]! + this.codeLen[s]!;
      if (this.arena.compare(bytes, 0, bytes.length, at, at + bytes.length) === 0) yield s;
    }
  }

  /** Live slots, oldest first. Safe while records are added (they are visited too) or removed. */
  *slotsOldestFirst(): Generator<number> {
    for (let s = 0; s < this.slots; s++) if (this.isLive(s)) yield s;
  }

  /** Marks a live slot dead and takes it out of both indexes. Its bytes stay until `vacuum`. */
  remove(s: number): void {
    if (!this.isLive(s)) return;
    this.codeChains.unlink(s, this.codeHashOf(s));
    this.urlChains.unlink(s, this.urlHash[s]!);
    this.flags[s] = 0;
    this.live--;
    // A link's events go with it: a code taken again starts with none.
    this.events.drop(s);
  }

  isLive(s: number): boolean {
    return s >= 0 && s < this.slots && (this.flags[s]! & LIVE) !== 0;
  }

  /**
   * Squeezes out dead slots and their bytes. Slot numbers change: the result maps each old slot
   * to its new number, or -1 for a dead one.
   */
  vacuum(): Int32Array {
    const map = new Int32Array(this.slots).fill(NONE);
    const capacity = capacityFor(this.live);
    let bytes = 0;
    for (let s = 0; s < this.slots; s++) if (this.isLive(s)) bytes += this.codeLen[s]! + this.urlLen[s]!;
    const arena = Buffer.allocUnsafe(Math.max(capacity * 64, Math.ceil(bytes * 1.25)));
    let used = 0;
    let n = 0;
    for (let s = 0; s < this.slots; s++) {
      if (!this.isLive(s)) continue;
      const len = this.codeLen[s]! + this.urlLen[s]!;
      this.arena.copy(arena, used, this.offset[s]!, this.offset[s]! + len);
      // Moving slot s down to n (n ≤ s) in place: n's old values were already read.
      this.offset[n] = used;
      this.codeLen[n] = this.codeLen[s]!;
      this.urlLen[n] = this.urlLen[s]!;
      this.created[n] = this.created[s]!;
      this.retention[n] = this.retention[s]!;
      this.untrackedCount[n] = this.untrackedCount[s]!;
      this.limit[n] = this.limit[s]!;
      this.flags[n] = this.flags[s]!;
      this.urlHash[n] = this.urlHash[s]!;
      map[s] = n++;
      used += len;
    }
    this.arena = arena;
    this.used = used;
    this.slots = n;
    this.hot.clear();
    this.resize(capacity);
    this.events.renumber(map);
    const labelled = new Map<number, SlotLabels>();
    for (const [s, labels] of this.labelled) if (map[s]! >= 0) labelled.set(map[s]!, labels);
    this.labelled = labelled;
    return map;
  }

  /** Sets the slot capacity (≥ slots in use) and rebuilds both hash tables at its size. */
  private resize(capacity: number): void {
    this.offset = grown(this.offset, capacity);
    this.codeLen = grown(this.codeLen, capacity);
    this.urlLen = grown(this.urlLen, capacity);
    this.created = grown(this.created, capacity);
    this.retention = grown(this.retention, capacity);
    this.untrackedCount = grown(this.untrackedCount, capacity);
    this.limit = grown(this.limit, capacity);
    this.flags = grown(this.flags, capacity);
    this.urlHash = grown(this.urlHash, capacity);
    this.rebuildChains(capacity);
  }

  /** Both hash indexes built anew at `capacity`, over the live slots. */
  protected rebuildChains(capacity: number): void {
    let live = 0;
    for (let s = 0; s < this.slots; s++) if (this.isLive(s)) live++;
    // Every slot live (a start from a checkpoint, a vacuum): slots 0 to live - 1, the URL hashes the column's own (80 MB less at 10M).
    const every = live === this.slots;
    const slots = every ? undefined : new Int32Array(live);
    const codeHashes = new Uint32Array(live);
    const urlHashes = every ? this.urlHash.subarray(0, live) : new Uint32Array(live);
    for (let s = 0, i = 0; s < this.slots; s++) {
      if (slots !== undefined) {
        if (!this.isLive(s)) continue;
        slots[i] = s;
        urlHashes[i] = this.urlHash[s]!;
      }
      codeHashes[i++] = this.codeHashOf(s);
    }
    const scratch = new BuildScratch(live);
    this.codeChains = HashChains.build(capacity, slots, codeHashes, scratch);
    this.urlChains = HashChains.build(capacity, slots, urlHashes, scratch);
  }
}

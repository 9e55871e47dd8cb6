/**
 * The keydir: every record in memory, stored in columns rather than as one object per link.
 *
 * A million links as JS objects cost about 300 bytes each (an object, two strings, two Map entries
 * and an order array). Here a link is a *slot*: its code and URL bytes sit side by side in one
 * growable arena Buffer, its numbers in typed arrays, and the two indexes (code → slot, URL →
 * slots) are chained hash tables in Int32Arrays (`hash-chains.ts`). That is about 130 bytes a link, nearly all of it
 * outside the JS heap, so the garbage collector has almost nothing to trace, and replay copies bytes
 * from the log into the arena without creating a string.
 *
 * Slots are handed out in creation order, so newest-first is a walk down the slot numbers. A
 * deleted (or re-created) record leaves a dead slot behind; `vacuum()` squeezes them out once they
 * outnumber the live ones, which renumbers slots: callers holding slot numbers get the mapping.
 */
import { hashBytes, HashChains, hashString, NONE } from './hash-chains.ts';
import { HOT_URL_MAX_BYTES, HotUrls } from './hot-urls.ts';
import type { LinkRecord } from './link-store.ts';

/** A record as the rest of the service sees it (the contract's), materialized from the columns. */
export type StoredRecord = LinkRecord;

const LIVE = 1;
/** The visit count differs from the last one written to the log (see `VisitCounts.flush`). */
const DIRTY = 2;

function grown<T extends Float64Array | Uint32Array | Int32Array | Uint8Array>(a: T, size: number): T {
  const b = new (a.constructor as new (n: number) => T)(size);
  b.set(a.subarray(0, Math.min(a.length, size)));
  return b;
}

/** A-Z folded to a-z; any other byte as it is. */
const fold = (b: number): number => (b >= 0x41 && b <= 0x5a ? b | 0x20 : b);

/**
 * Whether `buf[start, end)`, folded, contains `needle`; undefined as soon as a byte outside ASCII
 * is met (see `Keydir.containsFolded`).
 */
function foldedIndex(buf: Buffer, start: number, end: number, needle: Uint8Array): boolean | undefined {
  const m = needle.length;
  const first = needle[0]!;
  for (let i = start; i < end; i++) {
    const b = buf[i]!;
    // Lower-casing an ASCII character does not depend on its neighbours: a match is a match.
    if (b >= 0x80) return undefined;
    if (fold(b) !== first || i + m > end) continue;
    let j = 1;
    while (j < m && fold(buf[i + j]!) === needle[j]) j++;
    if (j === m) return true;
  }
  return false;
}

export class Keydir {
  /** Slots handed out, live or dead. */
  private slots = 0;
  private live = 0;
  private arena: Buffer;
  private used = 0;
  // One entry per slot. The code's bytes start at `offset`, the URL's right after them.
  private offset: Float64Array;
  private codeLen: Uint32Array;
  private urlLen: Uint32Array;
  private created: Float64Array;
  private retention: Uint32Array;
  private visitCount: Float64Array;
  /** Counted visits allowed; 0 = no limit (a limit is 1..2147483647, so 0 is free to mean none). */
  private limit: Uint32Array;
  private flags: Uint8Array;
  private codeHash: Uint32Array;
  private urlHash: Uint32Array;
  private codeChains: HashChains;
  private urlChains: HashChains;

  /** See `redirectUrl`. */
  private readonly hot = new HotUrls();

  constructor(capacity = 1024) {
    this.arena = Buffer.allocUnsafe(capacity * 64);
    this.offset = new Float64Array(capacity);
    this.codeLen = new Uint32Array(capacity);
    this.urlLen = new Uint32Array(capacity);
    this.created = new Float64Array(capacity);
    this.retention = new Uint32Array(capacity);
    this.visitCount = new Float64Array(capacity);
    this.limit = new Uint32Array(capacity);
    this.flags = new Uint8Array(capacity);
    this.codeHash = new Uint32Array(capacity);
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

  /** The live slot of `code`, or -1. */
  find(code: string): number {
    const arena = this.arena;
    const h = hashString(code);
    const chains = this.codeChains;
    outer: for (let s = chains.first(h); s !== NONE; s = chains.after(s)) {
      if (this.codeHash[s] !== h || this.codeLen[s] !== code.length) continue;
      const at = this.offset[s]!;
      for (let i = 0; i < code.length; i++) if (arena[at + i] !== code.charCodeAt(i)) continue outer;
      return s;
    }
    return NONE;
  }

  private findBytes(buf: Uint8Array, start: number, end: number, h: number): number {
    const len = end - start;
    const chains = this.codeChains;
    for (let s = chains.first(h); s !== NONE; s = chains.after(s)) {
      if (this.codeHash[s] !== h || this.codeLen[s] !== len) continue;
      const at = this.offset[s]!;
      if (this.arena.compare(buf, start, end, at, at + len) === 0) return s;
    }
    return NONE;
  }

  has(code: string): boolean {
    return this.find(code) !== NONE;
  }

  /**
   * Adds a record as the newest; a live record with the same code is replaced (it moves to the end).
   * `maxVisits`: 0 (or null) for no limit.
   */
  add(code: string, url: string, createdAt: number, retentionDays: number, visits: number, maxVisits: number | null = 0): number {
    const old = this.find(code);
    if (old !== NONE) this.remove(old);
    const urlBytes = Buffer.byteLength(url);
    const s = this.reserve(code.length + urlBytes);
    const at = this.used;
    this.arena.write(code, at, 'latin1');
    this.arena.write(url, at + code.length, 'utf8');
    return this.fill(s, at, code.length, urlBytes, hashString(code), createdAt, retentionDays, visits, maxVisits ?? 0);
  }

  /** `add`, from a log line's bytes: the code at [codeStart, codeEnd), the URL at [urlStart, urlEnd). */
  addBytes(buf: Buffer, codeStart: number, codeEnd: number, urlStart: number, urlEnd: number, createdAt: number, retentionDays: number, visits: number, maxVisits: number): number {
    const h = hashBytes(buf, codeStart, codeEnd);
    const old = this.findBytes(buf, codeStart, codeEnd, h);
    if (old !== NONE) this.remove(old);
    const codeBytes = codeEnd - codeStart;
    const s = this.reserve(codeBytes + urlEnd - urlStart);
    const at = this.used;
    buf.copy(this.arena, at, codeStart, codeEnd);
    buf.copy(this.arena, at + codeBytes, urlStart, urlEnd);
    return this.fill(s, at, codeBytes, urlEnd - urlStart, h, createdAt, retentionDays, visits, maxVisits);
  }

  /**
   * Edits the live slot `s` in place (an edit entry): it keeps its slot, so its place in the
   * newest-first order. A new URL gets fresh arena bytes (the old ones are reclaimed by `vacuum`)
   * and moves the slot to its new URL's chain.
   */
  edit(s: number, url: string, retentionDays: number, maxVisits: number | null): void {
    this.retention[s] = retentionDays;
    this.limit[s] = maxVisits ?? 0;
    const codeBytes = this.codeLen[s]!;
    const old = this.offset[s]! + codeBytes;
    const bytes = Buffer.from(url, 'utf8');
    if (bytes.length === this.urlLen[s]! && this.arena.compare(bytes, 0, bytes.length, old, old + bytes.length) === 0) return;
    this.urlChains.unlink(s, this.urlHash[s]!);
    this.reserveBytes(codeBytes + bytes.length);
    const at = this.used;
    // The code's bytes are copied along: a slot's code and URL sit side by side.
    this.arena.copy(this.arena, at, this.offset[s]!, this.offset[s]! + codeBytes);
    bytes.copy(this.arena, at + codeBytes);
    this.used = at + codeBytes + bytes.length;
    this.offset[s] = at;
    this.urlLen[s] = bytes.length;
    this.urlHash[s] = hashBytes(bytes, 0, bytes.length);
    this.hot.forget(s);
    // Not at the chain's head: the chain stays newest first, and this slot is not the newest.
    this.urlChains.linkInOrder(s, this.urlHash[s]!);
  }

  /** Room for one more slot and `bytes` more arena bytes; returns the new slot's number. */
  private reserve(bytes: number): number {
    this.reserveBytes(bytes);
    if (this.slots === this.offset.length) this.resize(this.slots * 2);
    return this.slots++;
  }

  private reserveBytes(bytes: number): void {
    if (this.used + bytes > this.arena.length) {
      const arena = Buffer.allocUnsafe(Math.max(this.arena.length * 2, this.used + bytes));
      this.arena.copy(arena, 0, 0, this.used);
      this.arena = arena;
    }
  }

  private fill(s: number, at: number, codeBytes: number, urlBytes: number, codeHash: number, createdAt: number, retentionDays: number, visits: number, maxVisits: number): number {
    this.used = at + codeBytes + urlBytes;
    // A slot number is reused only after `vacuum`, which empties the cache; this keeps it exact anyway.
    this.hot.forget(s);
    this.offset[s] = at;
    this.codeLen[s] = codeBytes;
    this.urlLen[s] = urlBytes;
    this.created[s] = createdAt;
    this.retention[s] = retentionDays;
    this.visitCount[s] = visits;
    this.limit[s] = maxVisits;
    this.flags[s] = LIVE;
    this.codeHash[s] = codeHash;
    const uh = hashBytes(this.arena, at + codeBytes, at + codeBytes + urlBytes);
    this.urlHash[s] = uh;
    this.link(s);
    this.live++;
    return s;
  }

  /** Puts slot `s` at the head of its two chains. */
  private link(s: number): void {
    this.codeChains.link(s, this.codeHash[s]!);
    this.urlChains.link(s, this.urlHash[s]!);
  }

  /** Marks a live slot dead and takes it out of both indexes. Its bytes stay until `vacuum`. */
  remove(s: number): void {
    if (!this.isLive(s)) return;
    this.codeChains.unlink(s, this.codeHash[s]!);
    this.urlChains.unlink(s, this.urlHash[s]!);
    this.flags[s] = 0;
    this.live--;
  }

  /** Removes the record of `code`; false when there is none. */
  delete(code: string): boolean {
    const s = this.find(code);
    if (s === NONE) return false;
    this.remove(s);
    return true;
  }

  isLive(s: number): boolean {
    return s >= 0 && s < this.slots && (this.flags[s]! & LIVE) !== 0;
  }

  code(s: number): string {
    const at = this.offset[s]!;
    return this.arena.toString('latin1', at, at + this.codeLen[s]!);
  }

  url(s: number): string {
    const at = this.offset[s]! + this.codeLen[s]!;
    return this.arena.toString('utf8', at, at + this.urlLen[s]!);
  }

  /** `url(s)` for a redirect: a popular link's URL is decoded once, not on every redirect. */
  redirectUrl(s: number): string {
    const kept = this.hot.get(s);
    if (kept !== undefined) return kept;
    const url = this.url(s);
    if (this.urlLen[s]! <= HOT_URL_MAX_BYTES) this.hot.set(s, url);
    return url;
  }

  createdAt(s: number): number {
    return this.created[s]!;
  }

  retentionDays(s: number): number {
    return this.retention[s]!;
  }

  visits(s: number): number {
    return this.visitCount[s]!;
  }

  /** The slot's visit limit; 0 when it has none. */
  maxVisits(s: number): number {
    return this.limit[s]!;
  }

  /** Sets the count from a count batch of the log. */
  setVisits(s: number, count: number): void {
    this.visitCount[s] = count;
  }

  /** Counts one visit; true when the slot was clean (the caller queues it for the next flush). */
  visit(s: number): boolean {
    this.visitCount[s]!++;
    const clean = (this.flags[s]! & DIRTY) === 0;
    this.flags[s]! |= DIRTY;
    return clean;
  }

  /** Marks a slot's count as written (false) or not (true); true when it was clean before. */
  markDirty(s: number, dirty: boolean): boolean {
    const was = (this.flags[s]! & DIRTY) !== 0;
    if (dirty) this.flags[s]! |= DIRTY;
    else this.flags[s]! &= ~DIRTY;
    return !was;
  }

  /**
   * Whether the code or the URL of slot `s` contains `needle`, compared as `toLowerCase()` would:
   * `needle` is already lower case and ASCII, and the slot's bytes are folded (A-Z to a-z) as they
   * are read, with no string made. Undefined when the slot holds a byte outside ASCII, where
   * folding bytes is not `toLowerCase()`: the caller decides on the strings then. (Codes and
   * WHATWG-serialized URLs are ASCII, so that is rare.)
   */
  containsFolded(s: number, needle: Uint8Array): boolean | undefined {
    const at = this.offset[s]!;
    const codeEnd = at + this.codeLen[s]!;
    const found = foldedIndex(this.arena, at, codeEnd, needle);
    if (found !== false) return found;
    return foldedIndex(this.arena, codeEnd, codeEnd + this.urlLen[s]!, needle);
  }

  /** The record in slot `s`; `code` may be passed when the caller has it already. */
  record(s: number, code = this.code(s)): StoredRecord {
    return { code, url: this.url(s), createdAt: this.created[s]!, retentionDays: this.retention[s]!, visits: this.visitCount[s]!, maxVisits: this.limit[s]! || null };
  }

  /** The record of `code` (a snapshot), like `Map.get`. */
  get(code: string): StoredRecord | undefined {
    const s = this.find(code);
    return s === NONE ? undefined : this.record(s, code);
  }

  /** Live slots with this URL, newest first. */
  *slotsWithUrl(url: string): Generator<number> {
    const bytes = Buffer.from(url, 'utf8');
    const h = hashBytes(bytes, 0, bytes.length);
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

  /** Codes in creation order, like `Map.keys`. */
  *keys(): Generator<string> {
    for (const s of this.slotsOldestFirst()) yield this.code(s);
  }

  /**
   * Squeezes out dead slots and their bytes. Slot numbers change: the result maps each old slot
   * to its new number, or -1 for a dead one.
   */
  vacuum(): Int32Array {
    const map = new Int32Array(this.slots).fill(NONE);
    const capacity = Math.max(1024, 2 ** Math.ceil(Math.log2(this.live * 1.25 + 1)));
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
      this.visitCount[n] = this.visitCount[s]!;
      this.limit[n] = this.limit[s]!;
      this.flags[n] = this.flags[s]!;
      this.codeHash[n] = this.codeHash[s]!;
      this.urlHash[n] = this.urlHash[s]!;
      map[s] = n++;
      used += len;
    }
    this.arena = arena;
    this.used = used;
    this.slots = n;
    this.hot.clear();
    this.resize(capacity);
    return map;
  }

  /** Sets the slot capacity (≥ slots in use) and rebuilds both hash tables at twice its size. */
  private resize(capacity: number): void {
    this.offset = grown(this.offset, capacity);
    this.codeLen = grown(this.codeLen, capacity);
    this.urlLen = grown(this.urlLen, capacity);
    this.created = grown(this.created, capacity);
    this.retention = grown(this.retention, capacity);
    this.visitCount = grown(this.visitCount, capacity);
    this.limit = grown(this.limit, capacity);
    this.flags = grown(this.flags, capacity);
    this.codeHash = grown(this.codeHash, capacity);
    this.urlHash = grown(this.urlHash, capacity);
    this.codeChains = new HashChains(capacity);
    this.urlChains = new HashChains(capacity);
    // Oldest first, each at its chain's head: every chain ends up newest first again.
    for (let s = 0; s < this.slots; s++) if (this.isLive(s)) this.link(s);
  }
}

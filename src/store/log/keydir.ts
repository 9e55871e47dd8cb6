/**
 * The keydir: every record in memory, stored in columns rather than as one object per link.
 *
 * A million links as JS objects cost about 300 bytes each (an object, two strings, two Map entries
 * and an order array). Here a link is a *slot*: its code and URL bytes sit side by side in one
 * growable arena Buffer, its numbers in typed arrays, and the two indexes (code → slot, URL →
 * slots) are chained hash tables in Int32Arrays (`hash-chains.ts`). That is about 145 bytes a link
 * with a 60–100 character URL (docs/performance.md, Storage), nearly all of it outside the JS
 * heap, so the garbage collector has almost nothing to trace, and replay copies bytes from the log
 * into the arena without creating a string.
 *
 * Slots are handed out in creation order: newest-first walks down the slot numbers. A deleted or
 * re-created record leaves a dead slot; `vacuum()` squeezes them out once they outnumber the live
 * ones, renumbering slots (callers holding slot numbers get the mapping).
 *
 * Here: lookups, adds and edits, a slot's values, a search's tests. Beside it, on the same fields:
 * visit counts and events (`keydir-visits.ts`), the checkpoint's copy (`keydir-image.ts`), the
 * columns, their indexes, growth and `vacuum` (`keydir-columns.ts`).
 */
import { foldedIndex } from './ascii-fold.ts';
import { hashBytes, hashStep, hashString, NONE } from './hash-chains.ts';
import { HOT_URL_MAX_BYTES } from './hot-urls.ts';
import type { PackedKeydir } from './keydir-image.ts';
import { KeydirVisits } from './keydir-visits.ts';
import { slotLabels, type LabelSource } from './link-labels.ts';
import { RememberedPaths, type Found } from './remembered-paths.ts';
import type { LinkRecord, Routing } from '../link-store.ts';

/** A record as the rest of the service sees it (the contract's), materialized from the columns. */
export type StoredRecord = LinkRecord;

/** Every latin1 character, as a `find` table: a wider one would not fit a byte of the arena. */
const LATIN1 = new Uint8Array(256).fill(1);

export class Keydir extends KeydirVisits {
  /**
   * The keydir a start-up checkpoint holds (`checkpoint.ts`); `late`: its slots that a compaction
   * copied after their code's older slot (the code was deleted and created anew meanwhile).
   */
  static fromCheckpoint(packed: PackedKeydir, late: readonly number[] = []): Keydir {
    const keydir = new Keydir(1);
    keydir.adopt(packed);
    for (const s of late) keydir.dropOlderTwin(s);
    return keydir;
  }

  /** A code's bytes while it is looked up (`find`); grown for a longer code. */
  private row = new Uint8Array(64);
  private readonly remembered = new RememberedPaths(); // see `findIn`

  /**
   * The live slot of the code that `text` spells from `start` to its end (all of `text` by
   * default), or -1, also when it has a character that `allowed` (a table by char code) does not
   * allow: by default any latin1 one, as `add` stores codes. The redirect (through `findIn`) passes
   * its request path, where the code begins and the code alphabet, so no string is made for the
   * code. Each character is read once, checked, hashed and kept in a byte row that the
   * comparisons read.
   */
  find(text: string, start = 0, allowed: Uint8Array = LATIN1): number {
    const len = text.length - start;
    if (len > this.row.length) this.row = new Uint8Array(len);
    const row = this.row;
    let h = this.seed;
    for (let i = 0; i < len; i++) {
      const c = text.charCodeAt(start + i);
      if (c >= allowed.length || allowed[c] === 0) return NONE;
      row[i] = c;
      h = hashStep(h, c);
    }
    return this.findBytes(row, 0, len, h >>> 0);
  }

  /**
   * `find`, remembering the paths it found a code in lately (`RememberedPaths`), and for a link
   * that needs nothing else, its URL: a remembered redirect reads no column of the slot. Any change
   * that could make an answer stale (a remove, an edit, `vacuum`, which renumbers slots) forgets
   * them all; visits change nothing an answer says. Undefined when no live code is there.
   */
  findIn(text: string, start: number, allowed: Uint8Array = LATIN1): Found | undefined {
    const kept = this.remembered.get(text, start, allowed);
    if (kept !== undefined) return kept;
    const s = this.find(text, start, allowed);
    if (s === NONE) return undefined;
    const plain = this.retention[s] === 0 && this.limit[s] === 0 && this.urlLen[s]! <= HOT_URL_MAX_BYTES && this.routingOf(s) === undefined;
    const found: Found = { slot: s, url: plain ? this.redirectUrl(s) : null };
    this.remembered.set(text, found);
    return found;
  }

  override remove(s: number): void {
    this.remembered.clear();
    super.remove(s);
  }

  override vacuum(): Int32Array {
    this.remembered.clear();
    return super.vacuum();
  }

  /** The live slot whose code is `buf[start, end)`, of hash `h`, or -1. */
  private findBytes(buf: Uint8Array, start: number, end: number, h: number): number {
    const len = end - start;
    const { arena, codeChains: chains, codeLen, offset } = this;
    outer: for (let s = chains.first(h); s !== NONE; s = chains.after(s)) {
      if (codeLen[s] !== len) continue;
      // A code is a few bytes: a loop here costs less than a call into Buffer.compare.
      const at = offset[s]! - start;
      for (let i = start; i < end; i++) if (arena[at + i] !== buf[i]) continue outer;
      return s;
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
  add(code: string, url: string, createdAt: number, retentionDays: number, visits: number, maxVisits: number | null = 0, labels?: LabelSource): number {
    const old = this.find(code);
    if (old !== NONE) this.remove(old);
    const urlBytes = Buffer.byteLength(url);
    const s = this.reserve(code.length + urlBytes);
    const at = this.used;
    this.arena.write(code, at, 'latin1');
    this.arena.write(url, at + code.length, 'utf8');
    this.fill(s, at, code.length, urlBytes, hashString(code, this.seed), createdAt, retentionDays, visits, maxVisits ?? 0);
    this.setLabels(s, labels);
    return s;
  }

  /** `add`, from a log line's bytes: the code at [codeStart, codeEnd), the URL at [urlStart, urlEnd). */
  addBytes(
    buf: Buffer,
    codeStart: number,
    codeEnd: number,
    urlStart: number,
    urlEnd: number,
    createdAt: number,
    retentionDays: number,
    visits: number,
    maxVisits: number,
  ): number {
    const h = hashBytes(buf, codeStart, codeEnd, this.seed);
    const old = this.findBytes(buf, codeStart, codeEnd, h);
    if (old !== NONE) this.remove(old);
    const codeBytes = codeEnd - codeStart;
    const s = this.reserve(codeBytes + urlEnd - urlStart);
    const at = this.used;
    buf.copy(this.arena, at, codeStart, codeEnd);
    buf.copy(this.arena, at + codeBytes, urlStart, urlEnd);
    return this.fill(s, at, codeBytes, urlEnd - urlStart, h, createdAt, retentionDays, visits, maxVisits);
  }

  /** Gives slot `s` these labels (its create's, whole): empty ones are none. */
  setLabels(s: number, labels: LabelSource | undefined): void {
    const kept = slotLabels(labels);
    if (kept === undefined) this.labelled.delete(s);
    else this.labelled.set(s, kept);
  }

  /**
   * Edits the live slot `s` in place (an edit entry): it keeps its slot, so its place in the
   * newest-first order. A new URL gets fresh arena bytes (the old ones are reclaimed by `vacuum`)
   * and moves the slot to its new URL's chain. The title, tags and routing are the edit's, whole;
   * the author stays the slot's (an edit never changes it).
   */
  edit(s: number, url: string, retentionDays: number, maxVisits: number | null, labels?: LabelSource): void {
    this.remembered.clear();
    this.setLabels(s, { title: labels?.title, tags: labels?.tags, author: this.labelled.get(s)?.author, routing: labels?.routing });
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
    this.urlHash[s] = hashBytes(bytes, 0, bytes.length, this.seed);
    this.hot.forget(s);
    // Not at the chain's head: the chain stays newest first, and this slot is not the newest.
    this.urlChains.linkInOrder(s, this.urlHash[s]!);
  }

  /** Removes the record of `code`; false when there is none. */
  delete(code: string): boolean {
    const s = this.find(code);
    if (s === NONE) return false;
    this.remove(s);
    return true;
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

  /** The slot's visit limit; 0 when it has none. */
  maxVisits(s: number): number {
    return this.limit[s]!;
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

  /**
   * Whether slot `s` has a title containing `needle` (lower case), compared as `toLowerCase()`
   * would.
   */
  titleContains(s: number, needle: string): boolean {
    const title = this.labelled.get(s)?.title;
    return title?.toLowerCase().includes(needle) === true;
  }

  /** Whether slot `s` has every tag of `tags` (compared exactly). */
  hasTags(s: number, tags: readonly string[]): boolean {
    const own = this.labelled.get(s)?.tags;
    return own !== undefined && tags.every((tag) => own.includes(tag));
  }

  /** Slot `s`'s routing (`routing.ts`), if any: one Map lookup at most. */
  routingOf = (s: number): Routing | undefined => (this.labelled.size === 0 ? undefined : this.labelled.get(s)?.routing);

  /** Whether slot `s` was made by the key `author` (`id`). */
  isBy = (s: number, author: string): boolean => this.labelled.get(s)?.author === author;

  /** The record in slot `s`; `code` may be passed when the caller has it already. */
  record(s: number, code = this.code(s)): StoredRecord {
    const rec: StoredRecord = {
      code,
      url: this.url(s),
      createdAt: this.created[s]!,
      retentionDays: this.retention[s]!,
      visits: this.visits(s),
      untracked: this.untrackedCount[s]!,
      maxVisits: this.limit[s]! || null,
    };
    const labels = this.labelled.get(s);
    if (labels?.title !== undefined) rec.title = labels.title;
    if (labels?.tags !== undefined) rec.tags = labels.tags;
    if (labels?.author !== undefined) rec.author = labels.author;
    if (labels?.routing !== undefined) rec.routing = labels.routing;
    return rec;
  }

  /** The record of `code` (a snapshot), like `Map.get`. */
  get(code: string): StoredRecord | undefined {
    const s = this.find(code);
    return s === NONE ? undefined : this.record(s, code);
  }

  /** Codes in creation order, like `Map.keys`. */
  *keys(): Generator<string> {
    for (const s of this.slotsOldestFirst()) yield this.code(s);
  }
}

/**
 * What the recorder knows of today's IPv4 clients (client-facts.ts): per address, its country and
 * its keyed hash, in one typed array rather than a `Map` of objects.
 *
 * Why: an event is made between two requests' worth of HTTP work, so every table it reads is cold
 * in the processor's caches. A `Map` lookup of a returning address is four trips to memory one
 * after the other (the hash bucket, the entry, the key string to compare, the facts object);
 * here the address, parsed to its 32-bit number, finds its row in one, with the facts on the same
 * cache line. Measured under the redirect mix of docs/performance.md, the address's lookup was the
 * largest single cost of an event.
 *
 * Only the one spelling of an IPv4 address takes this way (`parseIPv4`): four decimal numbers
 * 0–255 without leading zeros, which `canonicalAddress` gives back unchanged. Any other entry (a
 * port, IPv6, IPv4-mapped IPv6, no address) goes the `Map`'s way.
 *
 * Bounded like `BoundedCache` (mmdb.ts): two generations of at most `max` addresses each; an
 * address of the old one used again moves to the young one; when the young one is full it
 * becomes the old one, and the old one is emptied to be the young one.
 */
import { countryOf } from './packed.ts';

/**
 * `text` from `from` to `to` as an IPv4 address (an unsigned 32-bit number), or -1 unless it is
 * one in its one spelling (above).
 */
export function parseIPv4(text: string, from = 0, to = text.length): number {
  const n = to - from;
  if (n < 7 || n > 15) return -1;
  let value = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2e) {
      if (digits === 0 || dots === 3) return -1;
      value = value * 256 + octet;
      octet = 0;
      digits = 0;
      dots++;
    } else if (c >= 0x30 && c <= 0x39) {
      // A leading zero (`01`), or a number past 255 (which four digits always are).
      if (digits > 0 && octet === 0) return -1;
      octet = octet * 10 + (c - 0x30);
      if (octet > 255) return -1;
      digits++;
    } else return -1;
  }
  return dots === 3 && digits > 0 ? value * 256 + octet : -1;
}

/** Words of a row: the address, its country's number (`countryNumber`), its hash, its state. */
const ROW = 4;
const COUNTRY = 1;
const HASH = 2;
const STATE = 3;
/** State bits: the row holds an address; its hash is set. */
const USED = 1;
const HASHED = 2;

/** One generation: open addressing, linear probing, at most half full. */
class Generation {
  readonly rows: Int32Array;
  private readonly shift: number;
  private readonly mask: number;
  size = 0;

  constructor(max: number) {
    const bits = Math.max(4, Math.ceil(Math.log2(max * 2)));
    this.rows = new Int32Array((1 << bits) * ROW);
    this.shift = 32 - bits;
    this.mask = (1 << bits) - 1;
  }

  /** The row (a word index) of `address`, or of the free place where it would go. */
  place(address: number): number {
    const rows = this.rows;
    const key = address | 0;
    for (let i = Math.imul(key, 0x9e3779b1) >>> this.shift; ; i = (i + 1) & this.mask) {
      const at = i * ROW;
      if (rows[at + STATE] === 0 || rows[at] === key) return at;
    }
  }

  clear(): void {
    if (this.size === 0) return;
    this.rows.fill(0);
    this.size = 0;
  }
}

export class Ipv4Facts {
  private young: Generation;
  private old: Generation;

  constructor(private readonly max: number) {
    this.young = new Generation(max);
    this.old = new Generation(max);
  }

  /**
   * The row (a word index) of `address`, or -1 when it is not known: valid until the next `find`
   * or `add`. A row found in the old generation moves to the young one.
   */
  find(address: number): number {
    const at = this.young.place(address);
    if (this.young.rows[at + STATE] !== 0) return at;
    const aged = this.old.place(address);
    if (this.old.rows[aged + STATE] === 0) return -1;
    const row = this.old.rows.slice(aged, aged + ROW);
    const moved = this.add(address, 0);
    this.young.rows.set(row, moved);
    return moved;
  }

  /** Adds `address`, not known, with its country (`countryNumber`); returns its row, valid as `find`'s. */
  add(address: number, country: number): number {
    if (this.young.size >= this.max) {
      // Full: the young becomes the old, the old (emptied) the young.
      const emptied = this.old;
      emptied.clear();
      this.old = this.young;
      this.young = emptied;
    }
    const young = this.young;
    const at = young.place(address);
    young.rows[at] = address | 0;
    young.rows[at + COUNTRY] = country;
    young.rows[at + HASH] = 0;
    young.rows[at + STATE] = USED;
    young.size++;
    return at;
  }

  /** The country of the row at `at`. */
  country(at: number): string | null {
    return countryOf(this.young.rows[at + COUNTRY]!);
  }

  /** The hash of the row at `at`, or undefined when not set. */
  hash(at: number): number | undefined {
    const rows = this.young.rows;
    return (rows[at + STATE]! & HASHED) === 0 ? undefined : rows[at + HASH];
  }

  setHash(at: number, hash: number): void {
    const rows = this.young.rows;
    rows[at + HASH] = hash;
    rows[at + STATE] = rows[at + STATE]! | HASHED;
  }

  /** Forgets every address (a new day, a new country database). */
  clear(): void {
    this.young.clear();
    this.old.clear();
  }

  get size(): number {
    return this.young.size + this.old.size;
  }
}

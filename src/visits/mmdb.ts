/**
 * A MaxMind DB (`.mmdb`) reader for the country of a visit, written from the MaxMind DB File
 * Format Specification 2.0: the metadata at the end of the file, the binary search tree over the
 * address bits, and the data section (`mmdb-data.ts`). The caller reads the file; `openMmdb`
 * takes its bytes.
 *
 * Everything that can be wrong with a file is found at open: the metadata, the sizes, every
 * record reachable in the tree, and every data record it points to. So a file that opens answers
 * every lookup, and a damaged or truncated one is refused at start-up with one `MmdbError`
 * instead of failing on some visitor's address later. The format has no checksum: a flipped bit
 * that still leaves a valid file gives a wrong country, as in any reader.
 */
import { DataSection, MmdbError, type MmdbMap, type MmdbValue } from './mmdb-data.ts';
import { parseAddress, type Address } from './mmdb-address.ts';

export { MmdbError, type MmdbValue } from './mmdb-data.ts';

const MARKER = Buffer.from('\xab\xcd\xefMaxMind.com', 'latin1');
/** The metadata, marker included, is at most this long, so the marker is looked for only here. */
const METADATA_MAX = 128 * 1024;
const SEPARATOR = 16;
/** Distinct addresses remembered with their country (up to twice this many, `BoundedCache`). */
export const ADDRESS_CACHE = 16_384;
/** Distinct data records remembered with their country (a country database has a few hundred). */
const RECORD_CACHE = 4096;

interface MmdbMetadata {
  readonly databaseType: string;
  readonly ipVersion: 4 | 6;
  readonly recordSize: 24 | 28 | 32;
  readonly nodeCount: number;
  readonly binaryFormat: string;
  /** When the database was built (Unix seconds), if it says. */
  readonly buildEpoch: number | null;
}

function isMap(v: MmdbValue | null | undefined): v is MmdbMap {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}

function uintField(meta: MmdbMap, name: string, max: number, required = true): number | null {
  const v = meta[name];
  if (v === undefined && !required) return null;
  const n = typeof v === 'bigint' && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > max) {
    throw new MmdbError(v === undefined ? `the metadata has no ${name}` : `the metadata's ${name} is not an unsigned integer up to ${max}`);
  }
  return n;
}

/** The metadata map after the last marker, checked field by field. */
function readMetadata(buf: Buffer): { meta: MmdbMetadata; start: number } {
  const from = Math.max(0, buf.length - METADATA_MAX);
  const found = buf.subarray(from).lastIndexOf(MARKER);
  if (found < 0) throw new MmdbError('no MaxMind DB metadata marker in the last 128 KiB: not a MaxMind DB file, or truncated');
  const start = from + found;
  const decoded = new DataSection(buf, start + MARKER.length, buf.length).decode(0);
  if (!isMap(decoded)) throw new MmdbError('the metadata is not a map');
  const major = uintField(decoded, 'binary_format_major_version', 0xffff)!;
  const minor = uintField(decoded, 'binary_format_minor_version', 0xffff)!;
  if (major !== 2) throw new MmdbError(`binary format version ${major}.${minor} is not 2.x`);
  const recordSize = uintField(decoded, 'record_size', 0xffff)!;
  if (recordSize !== 24 && recordSize !== 28 && recordSize !== 32) throw new MmdbError(`record size ${recordSize} is not 24, 28 or 32`);
  const ipVersion = uintField(decoded, 'ip_version', 0xffff)!;
  if (ipVersion !== 4 && ipVersion !== 6) throw new MmdbError(`ip_version ${ipVersion} is not 4 or 6`);
  const nodeCount = uintField(decoded, 'node_count', 0xffffffff)!;
  if (nodeCount === 0) throw new MmdbError('the search tree has no nodes');
  const databaseType = decoded['database_type'];
  if (typeof databaseType !== 'string') throw new MmdbError('the metadata has no database_type string');
  const buildEpoch = uintField(decoded, 'build_epoch', Number.MAX_SAFE_INTEGER, false);
  return { meta: { databaseType, ipVersion, recordSize, nodeCount, binaryFormat: `${major}.${minor}`, buildEpoch }, start };
}

/** The country of a decoded record: GeoIP2's `country.iso_code`, or ip-location-db's `country_code`. */
function countryOfRecord(record: MmdbValue | null): string | null {
  if (!isMap(record)) return null;
  const country = record['country'];
  const code = isMap(country) ? country['iso_code'] : record['country_code'];
  return typeof code === 'string' && /^[A-Za-z]{2}$/.test(code) ? code.toUpperCase() : null;
}

/**
 * A cache of at most `2 × half` entries in two generations: new entries go to the young one; when
 * it is full it becomes the old one and the old is dropped; an old entry used again moves back to
 * the young. Each step is O(1) (deleting the oldest key of one `Map` costs more and more as the
 * deleted slots pile up), and a returning client is one `Map` lookup.
 */
export class BoundedCache<K, V> {
  private young = new Map<K, V>();
  private old = new Map<K, V>();

  constructor(private readonly half: number) {}

  get size(): number {
    return this.young.size + this.old.size;
  }

  get(key: K): V | undefined {
    const v = this.young.get(key);
    if (v !== undefined) return v;
    const aged = this.old.get(key);
    if (aged !== undefined) this.set(key, aged);
    return aged;
  }

  set(key: K, value: V): V {
    if (this.young.size >= this.half) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, value);
    return value;
  }
}

export class MmdbReader {
  readonly metadata: MmdbMetadata;
  private readonly buf: Buffer;
  private readonly data: DataSection;
  private readonly nodeCount: number;
  /** Where an IPv4 address starts its walk: the root of a v4 tree, the node at `::/96` of a v6 one. */
  private readonly v4Start: number;
  private readonly addresses = new BoundedCache<string, string | null>(ADDRESS_CACHE);
  private readonly records = new BoundedCache<number, string | null>(RECORD_CACHE);

  constructor(bytes: Uint8Array) {
    this.buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const { meta, start } = readMetadata(this.buf);
    this.metadata = meta;
    this.nodeCount = meta.nodeCount;
    const treeSize = (meta.recordSize / 4) * meta.nodeCount;
    if (treeSize + SEPARATOR > start) {
      throw new MmdbError(
        `the search tree of ${meta.nodeCount} nodes (${treeSize} bytes) does not fit before the metadata at byte ${start}: the file is truncated or damaged`,
      );
    }
    for (let i = treeSize; i < treeSize + SEPARATOR; i++)
      if (this.buf[i] !== 0) throw new MmdbError(`the 16 bytes after the search tree (at byte ${treeSize}) are not zeros`);
    this.data = new DataSection(this.buf, treeSize + SEPARATOR, start);
    for (const offset of this.checkTree()) this.data.check(offset);
    let node = 0;
    if (meta.ipVersion === 6) for (let i = 0; i < 96 && node < this.nodeCount; i++) node = this.record(node, 0);
    this.v4Start = node;
  }

  /** Record `bit` (0 left, 1 right) of `node`: a node number, `nodeCount` (no data), or data. */
  private record(node: number, bit: number): number {
    const b = this.buf;
    switch (this.metadata.recordSize) {
      case 24: {
        const o = node * 6 + bit * 3;
        return (b[o]! << 16) | (b[o + 1]! << 8) | b[o + 2]!;
      }
      case 28: {
        // The middle byte holds the top four bits of both records: the left's high nibble, the right's low.
        const o = node * 7;
        return bit === 0
          ? ((b[o + 3]! & 0xf0) << 20) | (b[o]! << 16) | (b[o + 1]! << 8) | b[o + 2]!
          : ((b[o + 3]! & 0x0f) << 24) | (b[o + 4]! << 16) | (b[o + 5]! << 8) | b[o + 6]!;
      }
      default:
        return b.readUInt32BE(node * 8 + bit * 4);
    }
  }

  /**
   * Walks every reachable node once per depth it is reached at (deeper wins: a shared subtree
   * such as the IPv4 space under `::/96` and `::ffff:0:0/96` is proven for its deepest use),
   * proving that every walk ends within the address's bits, in no data or in the data section.
   * Returns the distinct data offsets the tree points to.
   */
  private checkTree(): Set<number> {
    const bits = this.metadata.ipVersion === 6 ? 128 : 32;
    const n = this.nodeCount;
    const dataSize = this.data.length;
    const reached = new Uint8Array(n); // depth + 1 of the deepest arrival; 0: not reached
    const offsets = new Set<number>();
    const stack = [0, 0];
    reached[0] = 1;
    while (stack.length > 0) {
      const depth = stack.pop()!;
      const node = stack.pop()!;
      if (depth >= bits) throw new MmdbError(`the search tree goes on past the ${bits} bits of an address (node ${node})`);
      for (let bit = 0; bit < 2; bit++) {
        const r = this.record(node, bit);
        if (r < n) {
          if (reached[r]! < depth + 2) {
            reached[r] = depth + 2;
            stack.push(r, depth + 1);
          }
        } else if (r > n) {
          const offset = r - n - SEPARATOR;
          if (offset < 0 || offset >= dataSize) throw new MmdbError(`node ${node} points outside the data section (record ${r})`);
          offsets.add(offset);
        }
      }
    }
    return offsets;
  }

  /** The tree's answer for `addr`: `nodeCount` for no data, else a data record value. */
  private find(addr: Address): number {
    const n = this.nodeCount;
    let node: number;
    if (addr.v4) {
      node = this.v4Start;
      for (let i = 31; i >= 0 && node < n; i--) node = this.record(node, (addr.word >>> i) & 1);
    } else {
      if (this.metadata.ipVersion === 4) return n;
      node = 0;
      for (let i = 0; i < 128 && node < n; i++) node = this.record(node, (addr.bytes[i >> 3]! >> (7 - (i & 7))) & 1);
    }
    // Unreachable for a file that opened (checkTree proved every walk ends); kept so a bug here
    // can never decode the search tree as data.
    if (node < n) throw new MmdbError(`the search tree goes on past the bits of an address (node ${node})`);
    return node;
  }

  /** The decoded record of `address`, or `null`: no record, or not an address. */
  lookup(address: string): MmdbValue | null {
    const addr = parseAddress(address);
    if (addr === null) return null;
    const r = this.find(addr);
    return r === this.nodeCount ? null : this.data.decode(r - this.nodeCount - SEPARATOR);
  }

  /** The ISO 3166-1 alpha-2 country of `address` (upper case), or `null`. */
  countryOf(address: string): string | null {
    const cached = this.addresses.get(address);
    if (cached !== undefined) return cached;
    const addr = parseAddress(address);
    let country: string | null = null;
    if (addr !== null) {
      const r = this.find(addr);
      if (r !== this.nodeCount) {
        const known = this.records.get(r);
        country = known !== undefined ? known : this.records.set(r, countryOfRecord(this.data.decode(r - this.nodeCount - SEPARATOR)));
      }
    }
    return this.addresses.set(address, country);
  }
}

/**
 * Opens a MaxMind DB from its bytes; throws `MmdbError` saying what is wrong with a bad file. The
 * bytes are read in place, not copied: they must not change while the reader is in use.
 */
export function openMmdb(bytes: Uint8Array): MmdbReader {
  return new MmdbReader(bytes);
}

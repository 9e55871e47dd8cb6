/**
 * A small MaxMind DB writer for the reader's tests, from the format's specification: a search
 * tree over the networks given, a data section of every type, the metadata. It writes what the
 * tests need to see read (every type, every size form, every pointer size, each record size, a
 * data cache container, an end marker, an IPv4 subtree shared by two IPv6 prefixes), and the
 * pieces (`field`, `pointerBytes`, `encode`) to write damaged files by hand.
 */

/** A value whose format type is not its JS type's: the number types, bytes, pointers, padding. */
export class Typed {
  constructor(
    readonly type: number,
    readonly value: number | bigint | Uint8Array,
    /** For a pointer: force this pointer size (0–3) instead of the smallest that fits. */
    readonly pointerSize?: number,
  ) {}
}
export type Value = string | boolean | Value[] | { [key: string]: Value } | Typed;

export const u16 = (n: number): Typed => new Typed(5, n);
export const u32 = (n: number): Typed => new Typed(6, n);
export const i32 = (n: number): Typed => new Typed(8, n);
export const u64 = (n: bigint): Typed => new Typed(9, n);
export const u128 = (n: bigint): Typed => new Typed(10, n);
export const f64 = (n: number): Typed => new Typed(3, n);
export const f32 = (n: number): Typed => new Typed(15, n);
export const bytes = (b: Uint8Array): Typed => new Typed(4, b);
/** Bytes written as they are, for a damaged value. */
export const raw = (b: Uint8Array): Typed => new Typed(0, b);
/** A pointer to item `i` of the data cache container (`DbSpec.cache`). */
export const ref = (i: number, pointerSize?: number): Typed => new Typed(1, i, pointerSize);

/** The header of a field of `type` and `size`, then `payload`. */
export function field(type: number, size: number, payload: Uint8Array = new Uint8Array(0)): Buffer {
  const head: number[] = [];
  let sizeBits: number;
  let extra: number[] = [];
  if (size < 29) sizeBits = size;
  else if (size < 285) [sizeBits, extra] = [29, [size - 29]];
  else if (size < 65_821) [sizeBits, extra] = [30, [(size - 285) >> 8, (size - 285) & 0xff]];
  else [sizeBits, extra] = [31, [(size - 65_821) >> 16, ((size - 65_821) >> 8) & 0xff, (size - 65_821) & 0xff]];
  if (type <= 7) head.push((type << 5) | sizeBits);
  else head.push(sizeBits, type - 7);
  return Buffer.concat([Buffer.from(head), Buffer.from(extra), payload]);
}

/** A pointer to data offset `target`, of size `size` (the smallest that holds it by default). */
export function pointerBytes(target: number, size?: number): Buffer {
  const n = size ?? (target < 2048 ? 0 : target < 526_336 ? 1 : target < 134_744_064 ? 2 : 3);
  const base = [0, 2048, 526_336, 0][n]!;
  const v = target - base;
  if (v < 0 || (n < 3 && v >= 2 ** (11 + 8 * n))) throw new RangeError(`pointer size ${n} cannot hold ${target}`);
  const out = [(1 << 5) | (n << 3) | (n === 3 ? 0 : Math.floor(v / 2 ** (8 * (n + 1))) & 7)];
  for (let i = n; i >= 0; i--) out.push(Math.floor(v / 2 ** (8 * i)) & 0xff);
  return Buffer.from(out);
}

function uintBytes(n: bigint): Buffer {
  const out: number[] = [];
  for (; n > 0n; n >>= 8n) out.unshift(Number(n & 0xffn));
  return Buffer.from(out);
}

/** `value` in the data section's encoding; `refs` are the offsets of the cache items. */
export function encode(value: Value, refs: readonly number[] = []): Buffer {
  if (typeof value === 'string') {
    const b = Buffer.from(value, 'utf8');
    return field(2, b.length, b);
  }
  if (typeof value === 'boolean') return field(14, value ? 1 : 0);
  if (Array.isArray(value)) return Buffer.concat([field(11, value.length), ...value.map((v) => encode(v, refs))]);
  if (!(value instanceof Typed)) {
    const entries = Object.entries(value);
    // A key spelled `*ref<i>` is written as a pointer to cache item i (a string), as writers may.
    const key = (k: string): Buffer => (/^\*ref\d+$/.test(k) ? pointerBytes(refs[Number(k.slice(4))]!) : encode(k));
    return Buffer.concat([field(7, entries.length), ...entries.flatMap(([k, v]) => [key(k), encode(v, refs)])]);
  }
  const { type, value: v } = value;
  switch (type) {
    case 0:
      return Buffer.from(v as Uint8Array);
    case 1:
      return pointerBytes(refs[v as number]!, value.pointerSize);
    case 3: {
      const b = Buffer.alloc(8);
      b.writeDoubleBE(v as number);
      return field(3, 8, b);
    }
    case 15: {
      const b = Buffer.alloc(4);
      b.writeFloatBE(v as number);
      return field(15, 4, b);
    }
    case 4:
      return field(4, (v as Uint8Array).length, v as Uint8Array);
    case 8:
      if ((v as number) < 0) {
        const b = Buffer.alloc(4);
        b.writeInt32BE(v as number);
        return field(8, 4, b);
      }
      return field(8, uintBytes(BigInt(v as number)).length, uintBytes(BigInt(v as number)));
    default: {
      const b = uintBytes(BigInt(v as number | bigint));
      return field(type, b.length, b);
    }
  }
}

export interface DbSpec {
  ipVersion: 4 | 6;
  recordSize: 24 | 28 | 32;
  /** `[network, record]`: `a.b.c.d/len` (under `::/96` in an IPv6 tree) or an IPv6 network. */
  networks: readonly (readonly [string, Value])[];
  /** Values written first, in one data cache container, for `ref(i)` pointers. */
  cache?: readonly Value[];
  /**
   * Unreferenced bytes written after the cache, so the records lie beyond this offset (past 2^24
   * for a 28-bit tree whose records need their top four bits).
   */
  pad?: number;
  /** IPv6 tree: `::ffff:0:0/96` leads to the same IPv4 subtree as `::/96`. */
  mapV4?: boolean;
  /** Metadata fields to replace (or, `undefined`, to drop). */
  metadata?: Record<string, Value | undefined>;
}

type Child = TrieNode | { data: number } | null;
interface TrieNode {
  kids: [Child, Child];
}

/** The bits of a network: `prefix` bits of its address, MSB first. */
function networkBits(network: string, ipVersion: 4 | 6): number[] {
  const [addr, len] = network.split('/') as [string, string];
  const bits: number[] = [];
  if (!addr.includes(':')) {
    if (ipVersion === 6) for (let i = 0; i < 96; i++) bits.push(0);
    for (const part of addr.split('.')) for (let i = 7; i >= 0; i--) bits.push((Number(part) >> i) & 1);
    return bits.slice(0, (ipVersion === 6 ? 96 : 0) + Number(len));
  }
  const [head, tail = ''] = addr.split('::') as [string, string?];
  const hg = head ? head.split(':') : [];
  const tg = tail ? tail.split(':') : [];
  const groups = [...hg, ...Array<string>(8 - hg.length - tg.length).fill('0'), ...tg];
  for (const g of groups) for (let i = 15; i >= 0; i--) bits.push((parseInt(g, 16) >> i) & 1);
  return bits.slice(0, Number(len));
}

function insert(root: TrieNode, bits: readonly number[], leaf: Child): void {
  let node = root;
  for (let i = 0; i < bits.length - 1; i++) {
    const b = bits[i]! as 0 | 1;
    const kid = node.kids[b];
    if (kid === null || !('kids' in kid)) node.kids[b] = { kids: [kid, kid] }; // a wider network is split
    node = node.kids[b] as TrieNode;
  }
  node.kids[bits[bits.length - 1]! as 0 | 1] = leaf;
}

/** Writes a whole `.mmdb` file. */
export function writeMmdb(spec: DbSpec): Buffer {
  // The data section: the cache container, then each record, then an end marker.
  const refs: number[] = [];
  const cacheParts: Buffer[] = [];
  let at = 0;
  for (const item of spec.cache ?? []) {
    refs.push(at);
    const b = encode(item);
    cacheParts.push(b);
    at += b.length;
  }
  const container = spec.cache ? field(12, at, Buffer.concat(cacheParts)) : Buffer.alloc(0);
  const headLength = container.length - at;
  for (let i = 0; i < refs.length; i++) refs[i]! += headLength;
  const parts: Buffer[] = [container];
  for (let left = spec.pad ?? 0; left > 0; left -= 16_000_000) parts.push(field(4, Math.min(left, 16_000_000), Buffer.alloc(Math.min(left, 16_000_000))));
  let offset = parts.reduce((sum, b) => sum + b.length, 0);
  const root: TrieNode = { kids: [null, null] };
  for (const [network, record] of spec.networks) {
    const b = encode(record, refs);
    insert(root, networkBits(network, spec.ipVersion), { data: offset });
    parts.push(b);
    offset += b.length;
  }
  parts.push(field(13, 0));
  if (spec.ipVersion === 6 && spec.mapV4) {
    let v4: Child = root;
    for (let i = 0; i < 96 && v4 !== null && 'kids' in v4; i++) v4 = v4.kids[0];
    insert(root, networkBits('::ffff:0:0/96', 6), v4);
  }
  // Nodes numbered breadth first; a shared subtree keeps one number.
  const numbers = new Map<TrieNode, number>();
  const order: TrieNode[] = [];
  for (let q: TrieNode[] = [root]; q.length > 0; ) {
    const next: TrieNode[] = [];
    for (const n of q) {
      if (numbers.has(n)) continue;
      numbers.set(n, order.length);
      order.push(n);
      for (const k of n.kids) if (k !== null && 'kids' in k) next.push(k);
    }
    q = next;
  }
  const nodeCount = order.length;
  const value = (k: Child): number => (k === null ? nodeCount : 'kids' in k ? numbers.get(k)! : nodeCount + 16 + k.data);
  const nodeBytes = spec.recordSize / 4;
  const tree = Buffer.alloc(nodeCount * nodeBytes);
  order.forEach((n, i) => {
    const [l, r] = [value(n.kids[0]), value(n.kids[1])];
    const o = i * nodeBytes;
    if (spec.recordSize === 24) {
      tree.writeUIntBE(l, o, 3);
      tree.writeUIntBE(r, o + 3, 3);
    } else if (spec.recordSize === 28) {
      tree.writeUIntBE(l & 0xffffff, o, 3);
      tree[o + 3] = ((l >>> 24) << 4) | (r >>> 24);
      tree.writeUIntBE(r & 0xffffff, o + 4, 3);
    } else {
      tree.writeUInt32BE(l, o);
      tree.writeUInt32BE(r, o + 4);
    }
  });
  const meta: Record<string, Value> = {
    node_count: u32(nodeCount),
    record_size: u16(spec.recordSize),
    ip_version: u16(spec.ipVersion),
    database_type: 'Test-Country',
    languages: ['en'],
    binary_format_major_version: u16(2),
    binary_format_minor_version: u16(0),
    build_epoch: u64(1_700_000_000n),
    description: { en: 'written by the tests' },
  };
  for (const [k, v] of Object.entries(spec.metadata ?? {})) {
    if (v === undefined) delete meta[k];
    else meta[k] = v;
  }
  return Buffer.concat([tree, Buffer.alloc(16), ...parts, Buffer.from('\xab\xcd\xefMaxMind.com', 'latin1'), encode(meta)]);
}

/**
 * The data section of a MaxMind DB file: every type of the format (version 2.0), decoded with
 * bounds, so a damaged file is an `MmdbError`, never another exception, a hang or a wrong value.
 *
 * Two walks over the same bytes: `check` proves at open that a value decodes within the bounds
 * (remembering what it proved about each pointer target, so a database whose records share their
 * strings is checked in one pass over it), and `decode` builds the value. A record that passed
 * `check` cannot fail `decode`.
 */

/** A file that is not a MaxMind DB, or is damaged or truncated; the message says what is wrong. */
export class MmdbError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MmdbError';
  }
}

/**
 * A decoded value: strings, numbers (uint16, uint32, int32, double, float), bigints (uint64 and
 * uint128, whatever their value, so a field has one JS type), booleans, bytes, arrays and maps.
 */
export type MmdbValue = string | number | bigint | boolean | Uint8Array | MmdbValue[] | MmdbMap;
export interface MmdbMap {
  [key: string]: MmdbValue;
}

/** The type numbers of the format. */
enum T {
  Pointer = 1,
  String = 2,
  Double = 3,
  Bytes = 4,
  Uint16 = 5,
  Uint32 = 6,
  Map = 7,
  Int32 = 8,
  Uint64 = 9,
  Uint128 = 10,
  Array = 11,
  Container = 12,
  EndMarker = 13,
  Boolean = 14,
  Float = 15,
}

/** The most bytes each fixed-width type may use (the format lets integers drop leading zeros). */
const MAX_SIZE: Partial<Record<T, number>> = {
  [T.Uint16]: 2,
  [T.Uint32]: 4,
  [T.Int32]: 4,
  [T.Uint64]: 8,
  [T.Uint128]: 16,
  [T.Boolean]: 1,
};

/** Maps and arrays nested deeper than this are damage (libmaxminddb's bound; GeoIP2 nests 4). */
const MAX_DEPTH = 512;
/**
 * The most values one record may expand to. Shared pointers can make a small file expand to
 * billions of values; a GeoIP2 City record is a few hundred.
 */
export const MAX_VALUES = 65_536;

/** Where the extended sizes start: 29 + one byte, 285 + two, 65,821 + three. */
const SIZE_BASE = [0, 29, 285, 65_821];
/** What a pointer of each size adds to its value bits. */
const POINTER_BASE = [0, 2048, 526_336, 0];

export class DataSection {
  // The field header just read (`head`): its type, its size (a pointer's target), its payload.
  private type = 0;
  private size = 0;
  private at = 0;
  /** Values built or checked in the current record, against `MAX_VALUES`. */
  private count = 0;
  /** The deepest nesting reached in the current check. */
  private deepest = 0;
  /** Pointer targets already checked: the values they expand to and how deep they nest. */
  private readonly proven = new Map<number, { values: number; height: number }>();

  /** The section is `buf[start, end)`; pointers count from `start`. */
  constructor(
    private readonly buf: Buffer,
    private readonly start: number,
    private readonly end: number,
  ) {}

  get length(): number {
    return this.end - this.start;
  }

  /** The value at `offset` (from the section's start), built. */
  decode(offset: number): MmdbValue {
    this.count = 0;
    return this.value(this.start + offset, 0, true) as MmdbValue;
  }

  /** Proves the value at `offset` decodes within the bounds, or throws `MmdbError`. */
  check(offset: number): void {
    this.count = 0;
    this.deepest = 0;
    this.value(this.start + offset, 0, false);
  }

  /** Reads the header of the field at absolute `pos` into `type`, `size`, `at`. */
  private head(pos: number): void {
    const b = this.buf;
    if (pos >= this.end) throw new MmdbError(`a field at data offset ${pos - this.start} starts past the end of its section`);
    const ctrl = b[pos++]!;
    let type = ctrl >> 5;
    if (type === T.Pointer) {
      const n = (ctrl >> 3) & 3;
      this.need(pos, n + 1);
      let target = n === 3 ? 0 : ctrl & 7;
      for (let i = 0; i <= n; i++) target = target * 256 + b[pos + i]!;
      target += POINTER_BASE[n]!;
      if (target >= this.length) throw new MmdbError(`a pointer to data offset ${target} points past the end of its section (${this.length} bytes)`);
      this.type = T.Pointer;
      this.size = target;
      this.at = pos + n + 1;
      return;
    }
    if (type === 0) {
      this.need(pos, 1);
      type = b[pos++]! + 7;
      if (type < 8 || type > 15) throw new MmdbError(`unknown extended type ${type} at data offset ${pos - 2 - this.start}`);
    }
    let size = ctrl & 31;
    if (size >= 29) {
      const n = size - 28;
      this.need(pos, n);
      size = 0;
      for (let i = 0; i < n; i++) size = size * 256 + b[pos + i]!;
      size += SIZE_BASE[n]!;
      pos += n;
    }
    this.type = type;
    this.size = size;
    this.at = pos;
  }

  private need(pos: number, bytes: number): void {
    if (pos + bytes > this.end) throw new MmdbError(`a field at data offset ${pos - this.start} runs past the end of its section`);
  }

  /**
   * The value at absolute `pos`, built when `build`, else only proven; `this.at` is left just
   * after it. A pointer is followed once: the format forbids a pointer to a pointer, which is
   * also what keeps a chain of them from looping.
   */
  private value(pos: number, depth: number, build: boolean): MmdbValue | undefined {
    if (++this.count > MAX_VALUES) throw new MmdbError(`a record expands to more than ${MAX_VALUES} values`);
    this.head(pos);
    if (this.type !== T.Pointer) return this.payload(depth, build);
    const after = this.at;
    const target = this.size;
    let result: MmdbValue | undefined;
    const known = build ? undefined : this.proven.get(target);
    if (known !== undefined) {
      this.count += known.values;
      if (this.count > MAX_VALUES) throw new MmdbError(`a record expands to more than ${MAX_VALUES} values`);
      if (depth + known.height > MAX_DEPTH) throw new MmdbError(`maps and arrays nest deeper than ${MAX_DEPTH}`);
      this.deepest = Math.max(this.deepest, depth + known.height);
    } else {
      this.head(this.start + target);
      if (this.type === T.Pointer) throw new MmdbError(`a pointer at data offset ${pos - this.start} points to another pointer`);
      const count = this.count;
      const deepest = this.deepest;
      this.deepest = depth;
      result = this.payload(depth, build);
      if (!build) this.proven.set(target, { values: this.count - count, height: this.deepest - depth });
      this.deepest = Math.max(deepest, this.deepest);
    }
    this.at = after;
    return result;
  }

  /** The payload of the field whose header `head` just read. */
  private payload(depth: number, build: boolean): MmdbValue | undefined {
    const { type, size, at, buf } = this;
    const max = MAX_SIZE[type as T];
    if (max !== undefined && size > max) throw new MmdbError(`a field of type ${type} at data offset ${at - this.start} has ${size} bytes, more than ${max}`);
    if (type === T.Map || type === T.Array) return this.container(type, size, depth, build);
    if (type === T.Boolean) return size === 1;
    if (type === T.Container || type === T.EndMarker)
      throw new MmdbError(
        `${type === T.Container ? 'a data cache container' : 'an end marker'} at data offset ${at - 1 - this.start} where a value was expected`,
      );
    if ((type === T.Double && size !== 8) || (type === T.Float && size !== 4))
      throw new MmdbError(`a ${type === T.Double ? 'double' : 'float'} at data offset ${at - this.start} has ${size} bytes`);
    this.need(at, size);
    this.at = at + size;
    if (!build) return undefined;
    switch (type) {
      case T.String:
        // Not checked for valid UTF-8: a bad sequence reads as U+FFFD, as in every MaxMind reader.
        return buf.toString('utf8', at, at + size);
      case T.Double:
        return buf.readDoubleBE(at);
      case T.Float:
        return buf.readFloatBE(at);
      case T.Bytes:
        return new Uint8Array(buf.subarray(at, at + size));
      case T.Int32:
        // Fewer than four bytes hold a non-negative value; four are two's complement.
        return size === 4 ? buf.readInt32BE(at) : this.uint(at, size);
      case T.Uint16:
      case T.Uint32:
        return this.uint(at, size);
      default:
        return this.bigUint(at, size);
    }
  }

  private uint(at: number, size: number): number {
    let n = 0;
    for (let i = 0; i < size; i++) n = n * 256 + this.buf[at + i]!;
    return n;
  }

  private bigUint(at: number, size: number): bigint {
    let n = 0n;
    for (let i = 0; i < size; i++) n = (n << 8n) | BigInt(this.buf[at + i]!);
    return n;
  }

  /** A map (`size` pairs, each key a string or a pointer to one) or an array (`size` values). */
  private container(type: T, size: number, depth: number, build: boolean): MmdbValue | undefined {
    if (depth >= MAX_DEPTH) throw new MmdbError(`maps and arrays nest deeper than ${MAX_DEPTH}`);
    this.deepest = Math.max(this.deepest, depth + 1);
    let pos = this.at;
    if (type === T.Array) {
      const array: MmdbValue[] = [];
      for (let i = 0; i < size; i++) {
        const v = this.value(pos, depth + 1, build);
        if (build) array.push(v as MmdbValue);
        pos = this.at;
      }
      this.at = pos;
      return build ? array : undefined;
    }
    const map: MmdbMap = {};
    for (let i = 0; i < size; i++) {
      const key = this.key(pos, build);
      const v = this.value(this.at, depth + 1, build);
      pos = this.at;
      if (!build) continue;
      // A key `__proto__` is data like any other, not the object's prototype.
      if (key === '__proto__') Object.defineProperty(map, key, { value: v, enumerable: true, writable: true, configurable: true });
      else map[key] = v as MmdbValue;
    }
    this.at = pos;
    return build ? map : undefined;
  }

  /** The map key at absolute `pos` (a string, or a pointer to one; `''` unless `build`); `this.at` is left after it. */
  private key(pos: number, build: boolean): string {
    this.head(pos);
    let after = -1;
    if (this.type === T.Pointer) {
      after = this.at;
      this.head(this.start + this.size);
    }
    if (this.type !== T.String) throw new MmdbError(`a map key at data offset ${pos - this.start} is of type ${this.type}, not a string`);
    this.need(this.at, this.size);
    const key = build ? this.buf.toString('utf8', this.at, this.at + this.size) : '';
    this.at = after >= 0 ? after : this.at + this.size;
    return key;
  }
}

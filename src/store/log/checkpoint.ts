/**
 * The start-up checkpoint `urls.log.checkpoint` (Bitcask's hint files): the keydir's arrays as they
 * are in memory, with the log offset they cover, so that start-up reads them back in a few large
 * reads and replays only the log written after that offset (docs/storage.md).
 *
 * It is only ever a shortcut: the log stays the source of truth. A checkpoint that is missing,
 * damaged, of a newer format, or whose log is not the one it covers (replaced, truncated, restored
 * from a backup) is not used, with one warning line, and the whole log is replayed.
 *
 * A checkpoint is taken at a moment when memory is exactly what a replay of the log up to its end
 * would give (start-up, once replay is done; a clean shutdown, once every count is written), and
 * written in one synchronous step, so nothing changes the arrays while they are written.
 *
 * Layout: `URLSCKPT`, the layout version, the header's length and CRC-32 (4 bytes each, little
 * endian), the header (JSON: the log it covers, the keydir's numbers, each array's type, length,
 * bytes and CRC-32), then the arrays' bytes one after the other.
 */
import { endianness } from 'node:os';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { crc32 } from './crc32.ts';
import { CHECKPOINT_SUFFIX, TEMP_SUFFIX } from './files.ts';
import { FORMAT_VERSION } from './format.ts';
import type { StoreFs } from './fs.ts';
import { Keydir } from './keydir.ts';
import type { Column, KeydirImage } from './keydir-columns.ts';
import type { Labels } from '../link-store.ts';

const MAGIC = Buffer.from('URLSCKPT', 'latin1');
/** The layout this build writes and reads; a higher one is a newer build's, and not used. */
export const CHECKPOINT_VERSION = 1;
const PREAMBLE = MAGIC.length + 12;

/**
 * Bytes of the log, at its start and before the offset covered, whose checksums say it is still
 * the log the checkpoint was taken of (besides its device and inode, and its size).
 */
const WINDOW = 64 << 10;

/** A checkpoint is written when at least this much log is past the one there is (and ≥ 1/32 of the log). */
export const CHECKPOINT_MIN_BYTES = 1 << 20;

/** What a checkpoint says of the log it covers. */
export interface Covered {
  /** Bytes of log covered: replay goes on from here. */
  offset: number;
  /** Entries in those bytes (the version line is not one). */
  entries: number;
}

const TYPES = { u8: Uint8Array, i32: Int32Array, u32: Uint32Array, f64: Float64Array } as const;
type TypeName = keyof typeof TYPES;

interface Section {
  name: string;
  type: TypeName;
  /** Entries of the array as allocated; `bytes` of it are in the file. */
  length: number;
  bytes: number;
  crc: number;
}

interface Header {
  endian: string;
  log: Covered & { format: number; id: string; head: number; tail: number };
  keydir: { seed: number; slots: number; live: number; used: number };
  labels: [number, Labels][];
  referrers: [number, string][];
  sections: Section[];
}

export function checkpointPath(logPath: string): string {
  return logPath + CHECKPOINT_SUFFIX;
}

/**
 * Whether a checkpoint is worth writing: enough log past the one there is (`covered`: its offset, or
 * 0). Never for an empty log: a checkpoint covers the version line (replay from it reads none).
 */
export function checkpointDue(logBytes: number, covered: number, minBytes: number): boolean {
  return logBytes > 0 && logBytes >= minBytes && logBytes - covered >= Math.max(minBytes, logBytes / 32);
}

function typeOf(array: Column): TypeName {
  if (array instanceof Uint8Array) return 'u8';
  if (array instanceof Int32Array) return 'i32';
  if (array instanceof Uint32Array) return 'u32';
  return 'f64';
}

function bytesOf(array: Column, entries: number): Uint8Array {
  return new Uint8Array(array.buffer, array.byteOffset, entries * array.BYTES_PER_ELEMENT);
}

/** Reads exactly `into.length` bytes at `position`; false when the file ends first. */
function readFully(fs: StoreFs, fd: number, into: Uint8Array, position: number): boolean {
  for (let at = 0; at < into.length; ) {
    const step = into.subarray(at, Math.min(into.length, at + (1 << 30)));
    const n = fs.read(fd, Buffer.from(step.buffer, step.byteOffset, step.byteLength), position + at);
    if (n === 0) return false;
    at += n;
  }
  return true;
}

/** The CRC-32 of the log's bytes [from, to). */
function logCrc(fs: StoreFs, fd: number, from: number, to: number): number {
  const buf = Buffer.allocUnsafe(to - from);
  if (!readFully(fs, fd, buf, from)) return -1;
  return crc32(buf);
}

/** The log's identity as a checkpoint records it and checks it. */
function identity(fs: StoreFs, logFd: number, offset: number): { id: string; size: number; head: number; tail: number } {
  const { id, size } = fs.stat(logFd);
  if (size < offset) return { id, size, head: -1, tail: -1 };
  return { id, size, head: logCrc(fs, logFd, 0, Math.min(offset, WINDOW)), tail: logCrc(fs, logFd, Math.max(0, offset - WINDOW), offset) };
}

/**
 * Writes the checkpoint of `records`, which must be exactly what the log `logFd` replays to up to
 * `covered.offset`: to a temp file, fsynced, renamed into place, its directory fsynced. Synchronous
 * from the first byte to the rename. Returns the bytes written; throws (the temp file removed, any
 * checkpoint there was left as it was) when a step fails.
 */
export function writeCheckpoint(fs: StoreFs, logPath: string, logFd: number, records: Keydir, covered: Covered): { bytes: number; ms: number } {
  const started = performance.now();
  const image: KeydirImage = records.image();
  const log = identity(fs, logFd, covered.offset);
  const sections: Section[] = [];
  const data: Uint8Array[] = [];
  for (const { name, array, used } of image.arrays) {
    const bytes = bytesOf(array, used);
    data.push(bytes);
    sections.push({ name, type: typeOf(array), length: array.length, bytes: bytes.length, crc: crc32(bytes) });
  }
  const header: Header = {
    endian: endianness(),
    log: { ...covered, format: FORMAT_VERSION, id: log.id, head: log.head, tail: log.tail },
    keydir: { seed: image.seed, slots: image.slots, live: image.live, used: image.used },
    labels: image.labels,
    referrers: image.referrers,
    sections,
  };
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const preamble = Buffer.alloc(PREAMBLE);
  MAGIC.copy(preamble, 0);
  preamble.writeUInt32LE(CHECKPOINT_VERSION, MAGIC.length);
  preamble.writeUInt32LE(json.length, MAGIC.length + 4);
  preamble.writeUInt32LE(crc32(json), MAGIC.length + 8);

  const path = checkpointPath(logPath);
  const temp = path + TEMP_SUFFIX;
  const fd = fs.create(temp);
  let at = 0;
  try {
    for (const part of [preamble, json, ...data]) {
      fs.writeSync(fd, part, at);
      at += part.length;
    }
    fs.fsyncSync(fd);
  } catch (err) {
    try {
      fs.closeSync(fd);
    } catch {
      // The write's error is the one to report.
    }
    fs.remove(temp);
    throw err;
  }
  fs.closeSync(fd);
  fs.rename(temp, path);
  fs.syncDir(dirname(path));
  return { bytes: at, ms: Math.round(performance.now() - started) };
}

/** A checkpoint read back: the keydir, and what of the log it covers. */
export interface Loaded {
  records: Keydir;
  covered: Covered;
}

/**
 * Reads the checkpoint of the log `logFd`: the keydir and the offset to replay from; `undefined`
 * when there is none; or why it is not used (`{ reason }`). Never throws for a bad checkpoint.
 */
export function loadCheckpoint(fs: StoreFs, logPath: string, logFd: number): Loaded | { reason: string } | undefined {
  const path = checkpointPath(logPath);
  let fd: number | undefined;
  try {
    fd = fs.openRead(path);
    if (fd === undefined) return undefined;
    return load(fs, fd, logFd);
  } catch (err) {
    return { reason: `it could not be read (${(err as Error).message})` };
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

function load(fs: StoreFs, fd: number, logFd: number): Loaded | { reason: string } {
  const damaged = (what: string) => ({ reason: `it is damaged (${what})` });
  const preamble = Buffer.alloc(PREAMBLE);
  if (!readFully(fs, fd, preamble, 0) || !preamble.subarray(0, MAGIC.length).equals(MAGIC)) return damaged('not a checkpoint');
  const version = preamble.readUInt32LE(MAGIC.length);
  if (version > CHECKPOINT_VERSION) return { reason: `it was written by a newer version of url-shortener (checkpoint layout ${version}, this build reads ${CHECKPOINT_VERSION})` };
  const json = Buffer.alloc(preamble.readUInt32LE(MAGIC.length + 4));
  if (!readFully(fs, fd, json, PREAMBLE)) return damaged('cut short');
  if (crc32(json) !== preamble.readUInt32LE(MAGIC.length + 8)) return damaged('bad checksum of its header');
  const header = JSON.parse(json.toString('utf8')) as Header;
  if (header.endian !== endianness()) return { reason: 'it was written on a machine of another byte order' };
  if (header.log.format !== FORMAT_VERSION) return { reason: `it covers a log of format ${header.log.format}, and this build writes format ${FORMAT_VERSION}` };

  const { offset } = header.log;
  const log = identity(fs, logFd, offset);
  if (log.id !== header.log.id) return { reason: 'the log is not the file it was taken of (replaced, or restored from a copy)' };
  if (log.size < offset) return { reason: `the log is shorter (${log.size} bytes) than the ${offset} bytes it covers (truncated, or restored from an older copy)` };
  if (log.head !== header.log.head || log.tail !== header.log.tail) return { reason: 'the log does not hold the bytes it covers (rewritten, or restored from a copy)' };

  const arrays: KeydirImage['arrays'] = [];
  let at = PREAMBLE + json.length;
  for (const section of header.sections) {
    const type = TYPES[section.type];
    if (type === undefined) return damaged(`unknown array type ${section.type}`);
    // The arena is a Buffer (it is read as one); the rest are zeroed, as a keydir's arrays are past their use.
    const array: Column = section.name === 'arena' ? Buffer.allocUnsafe(section.length) : new type(section.length);
    const bytes = bytesOf(array, section.bytes / array.BYTES_PER_ELEMENT);
    if (!readFully(fs, fd, bytes, at)) return damaged('cut short');
    if (crc32(bytes) !== section.crc) return damaged(`bad checksum of ${section.name}`);
    arrays.push({ name: section.name, array, used: section.bytes / array.BYTES_PER_ELEMENT });
    at += section.bytes;
  }
  const records = Keydir.fromImage({ ...header.keydir, arrays, labels: header.labels, referrers: header.referrers });
  return { records, covered: { offset, entries: header.log.entries } };
}

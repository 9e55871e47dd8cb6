/**
 * The start-up checkpoint `urls.log.checkpoint` (Bitcask's hint files): the keydir's live slots,
 * column by column, with the log offset they cover, so that start-up reads them back in large reads
 * and replays only the log written after that offset (docs/storage.md).
 *
 * It is only ever a shortcut: the log stays the source of truth. A checkpoint that is missing,
 * damaged, of another layout, or whose log is not the one it covers (replaced, truncated, restored
 * from a backup) is not used, with one warning line, and the whole log is replayed.
 *
 * Two writers fill it (`checkpoint-writer.ts`). At start-up and at a clean shutdown memory is
 * exactly what the log replays to, and `writeCheckpoint` copies it in one synchronous step. A
 * compaction copies each slot in the same turn as it encodes the slot's line into the new log
 * (`compaction-checkpoint.ts`), so the checkpoint holds exactly what the new log's lines say, block
 * by block between turns: it covers the new log up to the end of those lines, and what was written
 * meanwhile is replayed after it.
 *
 * Layout: `URLSCKPT`, the layout version, the footer's length and CRC-32 (4 bytes each, little
 * endian), 4 spare bytes and the footer's offset (a little-endian double); then the blocks, each a
 * run of consecutive slots with its own columns (`checkpoint-block.ts`); then the footer (JSON: the
 * log covered, the keydir's numbers, labels, referrer hosts, stored API keys, and each block's
 * sizes and CRC-32).
 * The preamble is written last, so a file cut short anywhere is refused. This file holds the
 * layout and the reading back (`loadCheckpoint`).
 */
import type { WebhookImage } from './webhook-table.ts';
import type { DomainRedirects } from '../domain-store.ts';
import { endianness } from 'node:os';
import { crc32 } from './crc32.ts';
import { CHECKPOINT_SUFFIX } from './files.ts';
import { FORMAT_VERSION } from './format.ts';
import { nodeFs, type StoreFs } from './fs.ts';
import { blockBytes, type BlockInfo } from './checkpoint-block.ts';
import { CHAINS_DAMAGED, CHAINS_MISFIT, chainsFit, readChains, type ChainsInfo } from './checkpoint-chains.ts';
import { checkHere, checkInParallel, type Checked, THREAD_MIN_BYTES, worthAThread } from './checkpoint-crc.ts';
import { BlockReader, readFully, type BlockTotals } from './checkpoint-block-reader.ts';
import { Keydir } from './keydir.ts';
import type { SlotLabels } from './link-labels.ts';
import type { KeyRecord } from '../key-store.ts';

export const MAGIC = Buffer.from('URLSCKPT', 'latin1');
/** The layout this build writes and reads; another one is another build's, and not used. */
export const CHECKPOINT_VERSION = 2;
/** The preamble's bytes: the magic, the version, the footer's length, CRC-32 and offset. */
export const PREAMBLE = MAGIC.length + 24;

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

export interface Footer {
  endian: string;
  log: Covered & { format: number; id: string; head: number; tail: number };
  keydir: BlockTotals;
  labels: [number, SlotLabels][];
  referrers: [number, string][];
  /** The stored API keys as the log covered leaves them, oldest first (`key-table.ts`). */
  keys: KeyRecord[];
  /** The domains' redirects as the log covered leaves them (`domain-format.ts`); absent before format 6, which had none. */
  domains?: [string, DomainRedirects][];
  /** The orphan visits kept (`orphan-log.ts`), oldest first, as rows; absent before format 6. */
  orphans?: unknown[][];
  /** The webhooks (`webhook-table.ts`); absent when there are none, and before format 8. */
  webhooks?: WebhookImage;
  /** Slots a compaction copied after an older slot of the same code (`Keydir.fromCheckpoint`). */
  late: number[];
  blocks: BlockInfo[];
  /** The keydir's indexes after the blocks (`checkpoint-chains.ts`); absent when not written. */
  chains?: ChainsInfo;
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

/** The CRC-32 of the log's bytes [from, to). */
function logCrc(fs: StoreFs, fd: number, from: number, to: number): number {
  const buf = Buffer.allocUnsafe(to - from);
  if (!readFully(fs, fd, buf, from)) return -1;
  return crc32(buf);
}

/** The log's identity as a checkpoint records it and checks it. */
export function identity(fs: StoreFs, logFd: number, offset: number): { id: string; size: number; head: number; tail: number } {
  const { id, size } = fs.stat(logFd);
  if (size < offset) return { id, size, head: -1, tail: -1 };
  return { id, size, head: logCrc(fs, logFd, 0, Math.min(offset, WINDOW)), tail: logCrc(fs, logFd, Math.max(0, offset - WINDOW), offset) };
}

/** A checkpoint read back: the keydir, and what of the log it covers. */
export interface Loaded {
  records: Keydir;
  covered: Covered;
}

/**
 * Reads the checkpoint of the log `logFd`: the keydir and the offset to replay from; `undefined`
 * when there is none; or why it is not used (`{ reason }`). Never throws for a bad checkpoint.
 * `threadMinBytes`: from what size its checksums are checked on another thread (`checkpoint-crc.ts`).
 */
export function loadCheckpoint(fs: StoreFs, logPath: string, logFd: number, threadMinBytes = THREAD_MIN_BYTES): Loaded | { reason: string } | undefined {
  const path = checkpointPath(logPath);
  let fd: number | undefined;
  try {
    fd = fs.openRead(path);
    if (fd === undefined) return undefined;
    return load(fs, path, fd, logFd, threadMinBytes);
  } catch (err) {
    return { reason: `it could not be read (${(err as Error).message})` };
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

function load(fs: StoreFs, path: string, fd: number, logFd: number, threadMinBytes: number): Loaded | { reason: string } {
  const damaged = (what: string) => ({ reason: `it is damaged (${what})` });
  const preamble = Buffer.alloc(PREAMBLE);
  if (!readFully(fs, fd, preamble, 0) || !preamble.subarray(0, MAGIC.length).equals(MAGIC)) return damaged('not a checkpoint');
  const version = preamble.readUInt32LE(MAGIC.length);
  if (version > CHECKPOINT_VERSION)
    return { reason: `it was written by a newer version of url-shortener (checkpoint layout ${version}, this build reads ${CHECKPOINT_VERSION})` };
  if (version < CHECKPOINT_VERSION)
    return { reason: `it was written by an older version of url-shortener (checkpoint layout ${version}, this build reads ${CHECKPOINT_VERSION})` };
  const json = Buffer.alloc(preamble.readUInt32LE(MAGIC.length + 4));
  if (!readFully(fs, fd, json, preamble.readDoubleLE(MAGIC.length + 16))) return damaged('cut short');
  if (crc32(json) !== preamble.readUInt32LE(MAGIC.length + 8)) return damaged('bad checksum of its footer');
  const footer = JSON.parse(json.toString('utf8')) as Footer;
  if (footer.endian !== endianness()) return { reason: 'it was written on a machine of another byte order' };
  if (footer.log.format !== FORMAT_VERSION) return { reason: `it covers a log of format ${footer.log.format}, and this build writes format ${FORMAT_VERSION}` };
  // The log it covers is not replayed: keys it does not hold would be lost.
  if (!Array.isArray(footer.keys)) return damaged('no stored API keys in its footer');

  const { offset } = footer.log;
  const log = identity(fs, logFd, offset);
  if (log.id !== footer.log.id) return { reason: 'the log is not the file it was taken of (replaced, or restored from a copy)' };
  if (log.size < offset)
    return { reason: `the log is shorter (${log.size} bytes) than the ${offset} bytes it covers (truncated, or restored from an older copy)` };
  if (log.head !== footer.log.head || log.tail !== footer.log.tail)
    return { reason: 'the log does not hold the bytes it covers (rewritten, or restored from a copy)' };

  // Its chains are memory's at the capacity memory had: the keydir is loaded at that capacity.
  const capacity = footer.chains?.capacity;
  if (capacity !== undefined && !chainsFit(capacity, footer.keydir.slots)) return damaged(CHAINS_MISFIT);
  const blocks = new BlockReader(
    footer.keydir,
    footer.blocks,
    footer.labels,
    footer.referrers,
    footer.keys,
    footer.domains ?? [],
    footer.orphans ?? [],
    footer.webhooks,
    capacity,
  );
  // Every section's checksum, checked on another thread while this one reads them, when there are
  // enough bytes to be worth one (`checkpoint-crc.ts`).
  const sections: Checked[] = [];
  let at = PREAMBLE;
  for (const info of footer.blocks) {
    const { bytes } = blockBytes(info);
    sections.push([at, bytes, info[5]]);
    at += bytes;
  }
  if (footer.chains !== undefined) sections.push([at, footer.chains.bytes, footer.chains.crc]);
  const parallel = fs === nodeFs && worthAThread(sections, threadMinBytes) ? checkInParallel(path, sections) : undefined;
  try {
    for (const [i, info] of footer.blocks.entries()) {
      const wrong = blocks.read(fs, fd, sections[i]![0], info, parallel === undefined);
      if (wrong !== undefined) return damaged(wrong);
    }
    const packed = blocks.done();
    if (packed === undefined) return damaged('blocks smaller than its footer says');
    if (footer.chains !== undefined) {
      const chains = readChains(fs, fd, at, footer.chains, packed.slots, packed.codeLen.length, parallel === undefined);
      if (typeof chains === 'string') return damaged(chains);
      packed.chains = chains;
      at += footer.chains.bytes;
    }
    if (at !== preamble.readDoubleLE(MAGIC.length + 16)) return damaged('blocks smaller than its footer says');
    if (parallel !== undefined) {
      const bad = parallel.verdict() ?? checkHere(fs, fd, sections);
      if (bad !== -1) return damaged(bad < footer.blocks.length ? `bad checksum of the block at byte ${sections[bad]![0]}` : CHAINS_DAMAGED);
    }
    return { records: Keydir.fromCheckpoint(packed, footer.late), covered: { offset, entries: footer.log.entries } };
  } finally {
    parallel?.stop();
  }
}

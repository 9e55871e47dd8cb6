/**
 * A start-up checkpoint's blocks read back (their layout is `checkpoint-block.ts`): each block's
 * codes and URLs straight into the arena of the keydir being loaded, its other sections into that
 * keydir's columns, every block checked against its CRC-32 and the footer's totals.
 */
import type { WebhookImage } from './webhook-table.ts';
import type { DomainRedirects } from '../domain-store.ts';
import { blockBytes, type BlockInfo } from './checkpoint-block.ts';
import { crc32 } from './crc32.ts';
import type { StoreFs } from './fs.ts';
import { capacityFor } from './keydir-columns.ts';
import type { PackedKeydir } from './keydir-image.ts';
import type { SlotLabels } from './link-labels.ts';
import type { KeyRecord } from '../key-store.ts';

/** Reads exactly `into.length` bytes at `position`; false when the file ends first. */
export function readFully(fs: StoreFs, fd: number, into: Uint8Array, position: number): boolean {
  for (let at = 0; at < into.length; ) {
    const step = into.subarray(at, Math.min(into.length, at + (1 << 30)));
    const n = fs.read(fd, Buffer.from(step.buffer, step.byteOffset, step.byteLength), position + at);
    if (n === 0) return false;
    at += n;
  }
  return true;
}

/** The keydir's numbers a checkpoint's footer gives: what the blocks add up to. */
export interface BlockTotals {
  seed: number;
  slots: number;
  used: number;
  eventSlots: number;
  eventWords: number;
}

/** Reads a checkpoint's blocks, in order, into the columns of one keydir (`PackedKeydir`). */
export class BlockReader {
  private readonly packed: PackedKeydir;
  /** Where the next block's slots, arena bytes, event slots and event words go. */
  private readonly to = { slot: 0, arena: 0, eventSlot: 0, eventWord: 0 };
  /** A buffer of its own (offset 0), so that every section, padded to 8 bytes, is aligned for its array. */
  private buf = Buffer.allocUnsafeSlow(0);

  constructor(
    private readonly totals: BlockTotals,
    blocks: readonly BlockInfo[],
    labels: [number, SlotLabels][],
    referrers: [number, string][],
    keys: readonly KeyRecord[],
    domains: [string, DomainRedirects][],
    orphans: unknown[][],
    webhooks: WebhookImage | undefined,
    /** The slot capacity: its hash chains' when it holds them (`checkpoint-chains.ts`), else what a replay leaves. */
    capacity = capacityFor(totals.slots),
  ) {
    const { slots, used, eventSlots, eventWords } = totals;
    this.packed = {
      seed: totals.seed,
      slots,
      used,
      // Room to grow, as a replay leaves: what is never written is never resident.
      arena: Buffer.allocUnsafe(Math.max(capacity * 64, Math.ceil(used * 1.25))),
      codeLen: new Uint32Array(capacity),
      urlLen: new Uint32Array(capacity),
      created: blocks.some((b) => b[4] === 1) ? new Float64Array(capacity) : new Uint32Array(capacity),
      retention: new Uint32Array(capacity),
      untracked: new Float64Array(capacity),
      limit: new Uint32Array(capacity),
      urlHash: new Uint32Array(capacity),
      events: {
        slots: new Int32Array(eventSlots),
        lengths: new Uint32Array(eventSlots),
        seqs: new Float64Array(eventSlots),
        data: new Uint32Array(eventWords),
      },
      labels,
      referrers,
      keys,
      domains,
      orphans,
      webhooks,
    };
  }

  /** Reads the block `info` at `at`; returns what is wrong with it, if anything. `verify`: false when its checksum is checked elsewhere (`checkpoint-crc.ts`). */
  read(fs: StoreFs, fd: number, at: number, info: BlockInfo, verify = true): string | undefined {
    const { packed, to, totals } = this;
    const [n, arena, m, w, wide] = info;
    const { bytes, at: section } = blockBytes(info);
    if (to.slot + n > totals.slots || to.arena + arena > totals.used || to.eventSlot + m > totals.eventSlots || to.eventWord + w > totals.eventWords) {
      return 'blocks larger than its footer says';
    }
    // The codes and URLs straight into the arena (the block's first section); the rest after them,
    // from its next 8-byte boundary, into `buf`.
    const columns = section[1]!;
    if (this.buf.length < bytes - columns) this.buf = Buffer.allocUnsafeSlow(bytes - columns);
    const buf = this.buf;
    const codesAndUrls = packed.arena.subarray(to.arena, to.arena + arena);
    const rest = buf.subarray(0, bytes - columns);
    if (!readFully(fs, fd, codesAndUrls, at) || !readFully(fs, fd, rest, at + columns)) return 'cut short';
    if (verify && crc32(rest, crc32(Buffer.alloc(columns - arena), crc32(codesAndUrls))) !== info[5]) return `bad checksum of the block at byte ${at}`;
    const u32 = (i: number, count: number) => new Uint32Array(buf.buffer, section[i]! - columns, count);
    const f64 = (i: number, count: number) => new Float64Array(buf.buffer, section[i]! - columns, count);
    packed.codeLen.set(u32(1, n), to.slot);
    packed.urlLen.set(u32(2, n), to.slot);
    packed.created.set(wide ? f64(3, n) : u32(3, n), to.slot);
    packed.retention.set(u32(4, n), to.slot);
    packed.untracked.set(f64(5, n), to.slot);
    packed.limit.set(u32(6, n), to.slot);
    packed.urlHash.set(u32(7, n), to.slot);
    const eventSlotsOf = u32(8, m);
    for (let i = 0; i < m; i++) packed.events.slots[to.eventSlot + i] = to.slot + eventSlotsOf[i]!;
    packed.events.lengths.set(u32(9, m), to.eventSlot);
    packed.events.seqs.set(f64(10, m), to.eventSlot);
    packed.events.data.set(u32(11, w), to.eventWord);
    to.slot += n;
    to.arena += arena;
    to.eventSlot += m;
    to.eventWord += w;
    return undefined;
  }

  /** The columns, once every block was read; undefined when the blocks add up to less than the footer says. */
  done(): PackedKeydir | undefined {
    const { to, totals } = this;
    if (to.slot !== totals.slots || to.arena !== totals.used || to.eventSlot !== totals.eventSlots || to.eventWord !== totals.eventWords) return undefined;
    return this.packed;
  }
}

/**
 * The blocks of a start-up checkpoint (`checkpoint.ts`): a run of consecutive slots each, with the
 * slots' columns one section after the other, every section padded to 8 bytes so that it reads
 * straight into a typed array. `Block` gathers the slots `KeydirImage.copySlot` gives it and
 * makes a block's bytes; `BlockReader` (`checkpoint-block-reader.ts`) reads the blocks back into
 * the columns of one keydir.
 *
 * The sections of a block of `n` slots, `e` of them with events: the codes and URLs (each slot's
 * code, then its URL), then `n` code lengths, URL lengths, creation times (32-bit, or 64 when one
 * needs it), retention days, untracked visits (64-bit), visit limits and URL hashes, then `e`
 * slots (within the block), event counts and next event numbers (64-bit), then the events.
 */
import { crc32 } from './crc32.ts';
import { grown } from './keydir-columns.ts';
import type { SlotSink } from './keydir-image.ts';
import type { SlotLabels } from './link-labels.ts';
import { STRIDE } from '../../visits/packed.ts';

/** Slots a block of `writeCheckpoint` holds: about a megabyte. A compaction's block is its slice. */
export const BLOCK_SLOTS = 8192;

/** A block's numbers in the footer: slots, arena bytes, slots with events, event words, created stored as doubles (1) or not (0), CRC-32. */
export type BlockInfo = [slots: number, arena: number, eventSlots: number, eventWords: number, wide: number, crc: number];

const pad8 = (n: number): number => (n + 7) & ~7;

/** A block's bytes, and where each of its sections starts in them (file order, as `Block.take` lists them). */
export function blockBytes(info: BlockInfo): { bytes: number; at: number[] } {
  const [slots, arena, eventSlots, eventWords, wide] = info;
  const sizes = [
    arena,
    slots * 4,
    slots * 4,
    slots * (wide ? 8 : 4),
    slots * 4,
    slots * 8,
    slots * 4,
    slots * 4,
    eventSlots * 4,
    eventSlots * 4,
    eventSlots * 8,
    eventWords * 4,
  ];
  const at: number[] = [];
  let bytes = 0;
  for (const size of sizes) {
    at.push(bytes);
    bytes += pad8(size);
  }
  return { bytes, at };
}

/** `a`, or a copy with room for `need` entries (at least twice the length: growth by doubling). */
function room<T extends Uint32Array | Float64Array>(a: T, need: number): T {
  return need <= a.length ? a : grown(a, Math.max(need, a.length * 2));
}

const bytesOf = (a: Uint32Array | Int32Array | Float64Array | Uint8Array, entries: number) =>
  new Uint8Array(a.buffer, a.byteOffset, entries * a.BYTES_PER_ELEMENT);

/** The slots copied since the last block was taken (`SlotSink` of `KeydirImage.copySlot`). */
export class Block implements SlotSink {
  slots = 0;
  private arena = Buffer.allocUnsafe(1 << 20);
  private used = 0;
  /**
   * The source bytes not yet copied: slots in creation order mostly sit one after the other in
   * the keydir's arena, so a run of them is copied in one call rather than one call a slot.
   */
  private run: { from: Buffer | undefined; start: number; end: number } = { from: undefined, start: 0, end: 0 };
  private codeLen: Uint32Array = new Uint32Array(BLOCK_SLOTS);
  private urlLen: Uint32Array = new Uint32Array(BLOCK_SLOTS);
  private created: Float64Array = new Float64Array(BLOCK_SLOTS);
  private wide = false;
  private retention: Uint32Array = new Uint32Array(BLOCK_SLOTS);
  private untracked: Float64Array = new Float64Array(BLOCK_SLOTS);
  private limit: Uint32Array = new Uint32Array(BLOCK_SLOTS);
  private urlHash: Uint32Array = new Uint32Array(BLOCK_SLOTS);
  private eventSlots: Uint32Array = new Uint32Array(64);
  private eventLengths: Uint32Array = new Uint32Array(64);
  private eventSeqs: Float64Array = new Float64Array(64);
  private eventCount = 0;
  private eventData: Uint32Array = new Uint32Array(1024);
  private eventWords = 0;
  /** Labels by slot number of the checkpoint (`base` is the first of this block's). */
  readonly labelled: [number, SlotLabels][] = [];
  base = 0;

  slot(
    arena: Buffer,
    at: number,
    codeLen: number,
    urlLen: number,
    created: number,
    retention: number,
    untracked: number,
    limit: number,
    urlHash: number,
  ): void {
    const n = this.slots++;
    if (n === this.codeLen.length) {
      this.codeLen = room(this.codeLen, n + 1);
      this.urlLen = room(this.urlLen, n + 1);
      this.created = room(this.created, n + 1);
      this.retention = room(this.retention, n + 1);
      this.untracked = room(this.untracked, n + 1);
      this.limit = room(this.limit, n + 1);
      this.urlHash = room(this.urlHash, n + 1);
    }
    const len = codeLen + urlLen;
    const run = this.run;
    if (run.from !== arena || run.end !== at) {
      this.copyRun();
      run.from = arena;
      run.start = run.end = at;
    }
    run.end += len;
    this.codeLen[n] = codeLen;
    this.urlLen[n] = urlLen;
    this.created[n] = created;
    if (created > 0xffffffff) this.wide = true;
    this.retention[n] = retention;
    this.untracked[n] = untracked;
    this.limit[n] = limit;
    this.urlHash[n] = urlHash;
  }

  events(length: number, nextSeq: number, data: Uint32Array | undefined): void {
    const i = this.eventCount++;
    this.eventSlots = room(this.eventSlots, i + 1);
    this.eventLengths = room(this.eventLengths, i + 1);
    this.eventSeqs = room(this.eventSeqs, i + 1);
    this.eventSlots[i] = this.slots - 1;
    this.eventLengths[i] = length;
    this.eventSeqs[i] = nextSeq;
    const words = length * STRIDE;
    if (words === 0) return;
    this.eventData = room(this.eventData, this.eventWords + words);
    // Copied now: a compaction's block is written later, and a link's events change meanwhile.
    this.eventData.set(data!.subarray(0, words), this.eventWords);
    this.eventWords += words;
  }

  labels(labels: SlotLabels): void {
    this.labelled.push([this.base + this.slots - 1, labels]);
  }

  /** Copies the pending run of source bytes into the block's arena. */
  private copyRun(): void {
    const { from, start, end } = this.run;
    if (from === undefined || end === start) return;
    const len = end - start;
    if (this.used + len > this.arena.length) {
      const more = Buffer.allocUnsafe(Math.max(this.arena.length * 2, this.used + len));
      this.arena.copy(more, 0, 0, this.used);
      this.arena = more;
    }
    from.copy(this.arena, this.used, start, end);
    this.used += len;
    this.run.from = undefined;
  }

  /**
   * The block's bytes and numbers; the block is empty again. The codes and URLs are copied only
   * now, which is safe: a keydir's arena bytes are never written over (an edit appends; a grown
   * arena is a new buffer), and `vacuum`, which moves them, does not run while a compaction copies.
   */
  take(): { bytes: Buffer; info: BlockInfo } {
    this.copyRun();
    const n = this.slots;
    const info: BlockInfo = [n, this.used, this.eventCount, this.eventWords, this.wide ? 1 : 0, 0];
    const created = this.wide ? this.created : Uint32Array.from(this.created.subarray(0, n));
    const parts = [
      this.arena.subarray(0, this.used),
      bytesOf(this.codeLen, n),
      bytesOf(this.urlLen, n),
      bytesOf(created, n),
      bytesOf(this.retention, n),
      bytesOf(this.untracked, n),
      bytesOf(this.limit, n),
      bytesOf(this.urlHash, n),
      bytesOf(this.eventSlots, this.eventCount),
      bytesOf(this.eventLengths, this.eventCount),
      bytesOf(this.eventSeqs, this.eventCount),
      bytesOf(this.eventData, this.eventWords),
    ];
    const { bytes: size, at } = blockBytes(info);
    // Not zeroed first: every byte is a section's or a padding byte, and the padding is zeroed here.
    const bytes = Buffer.allocUnsafe(size);
    parts.forEach((part, i) => {
      bytes.set(part, at[i]);
      bytes.fill(0, at[i]! + part.length, at[i + 1] ?? size);
    });
    info[5] = crc32(bytes);
    this.base += n;
    this.slots = this.used = this.eventCount = this.eventWords = 0;
    this.run.start = this.run.end = 0;
    this.wide = false;
    return { bytes, info };
  }
}

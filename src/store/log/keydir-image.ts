/**
 * The keydir as a start-up checkpoint holds it (`checkpoint.ts`): each live slot's values given to
 * the checkpoint's writer (`copySlot`), and the columns a checkpoint loaded taken over as they are
 * (`adopt`), with the offsets, flags and both indexes rebuilt from them.
 *
 * Its own file because only the checkpoint reads or writes a keydir whole: `KeydirImage` extends
 * the columns (`keydir-columns.ts`) and `Keydir` extends it (through `KeydirVisits`), so each reads
 * the same fields directly.
 */
import { WebhookTable, type WebhookImage } from './webhook-table.ts';
import { OrphanTable } from './orphan-log.ts';
import type { DomainRedirects } from '../domain-store.ts';
import { DomainTable } from './domain-format.ts';
import type { KeydirChains } from './checkpoint-chains.ts';
import { KeydirColumns, LIVE, OFFSET32_MAX } from './keydir-columns.ts';
import { LinkEvents, type EventsImage } from './link-events.ts';
import { Referrers } from './referrers.ts';
import { HashChains, NONE } from './hash-chains.ts';
import { KeyTable } from './key-table.ts';
import type { SlotLabels } from './link-labels.ts';
import type { KeyRecord } from '../key-store.ts';

/**
 * A keydir as the start-up checkpoint loads it (`checkpoint.ts`): the live slots only, numbered
 * from 0 in creation order, their columns in arrays of one length (the slot capacity, a power of
 * two), and the arena holding their codes and URLs one after the other in that order. The offsets,
 * flags and both indexes follow from these (`adopt`).
 */
export interface PackedKeydir {
  seed: number;
  slots: number;
  /** Arena bytes in use. */
  used: number;
  arena: Buffer;
  codeLen: Uint32Array;
  urlLen: Uint32Array;
  created: Uint32Array | Float64Array;
  retention: Uint32Array;
  untracked: Float64Array;
  limit: Uint32Array;
  urlHash: Uint32Array;
  events: EventsImage;
  labels: [number, SlotLabels][];
  referrers: [number, string][];
  /** The stored API keys, oldest first (`key-table.ts`). */
  keys: readonly KeyRecord[];
  /** The domains' redirects (`domain-format.ts`). */
  domains: readonly [string, DomainRedirects][];
  /** The orphan visits, as rows (`orphan-log.ts`). */
  orphans: readonly unknown[];
  /** The webhooks (`webhook-table.ts`), absent when none. */
  webhooks?: WebhookImage | undefined;
  /** Both indexes, when the checkpoint holds them (`checkpoint-chains.ts`); else built. */
  chains?: KeydirChains | undefined;
}

/**
 * Where `KeydirImage.copySlot` puts a slot's values: the start-up checkpoint's writer. Plain
 * arguments, not an object: a checkpoint copies every slot of the keydir.
 */
export interface SlotSink {
  slot(arena: Buffer, at: number, codeLen: number, urlLen: number, created: number, retention: number, untracked: number, limit: number, urlHash: number): void;
  /** The events of the slot last given (`length` of them in `data`) and the number of its next. */
  events(length: number, nextSeq: number, data: Uint32Array | undefined): void;
  labels(labels: SlotLabels): void;
}

export abstract class KeydirImage extends KeydirColumns {
  /** The hashes' seed: a checkpoint keeps it with the URL hashes it copies (`checkpoint.ts`). */
  get hashSeed(): number {
    return this.seed;
  }

  /**
   * Gives `sink` the values of the live slot `s`: what a replay of its create (and of its events'
   * lines, `K` and `J`) sets. `nextSeqs`: also the next event number of a slot without events,
   * which a compaction does not write (`compaction.ts`), so a checkpoint of a compaction leaves it out.
   */
  copySlot(s: number, sink: SlotSink, nextSeqs: boolean): void {
    sink.slot(
      this.arena,
      this.offset[s]!,
      this.codeLen[s]!,
      this.urlLen[s]!,
      this.created[s]!,
      this.retention[s]!,
      this.untrackedCount[s]!,
      this.limit[s]!,
      this.urlHash[s]!,
    );
    const events = this.events;
    const n = events.length(s);
    const next = events.nextSeq(s);
    if (n > 0 || (nextSeqs && next > 0)) sink.events(n, next, events.data(s));
    const labels = this.labelled.get(s);
    if (labels !== undefined) sink.labels(labels);
  }

  /** Both indexes as they are, when a checkpoint's slots are these slots (every slot live: `checkpoint-chains.ts`); else undefined. */
  chainsImage(): KeydirChains | undefined {
    if (this.live !== this.slots) return undefined;
    return { code: this.codeChains.image(), url: this.urlChains.image() };
  }

  /**
   * Takes over the columns a checkpoint loaded (`checkpoint.ts`): the offsets follow from the code
   * and URL lengths (the slots' bytes are in slot order), every slot is live, and both indexes are
   * the checkpoint's when it has them, else built as a replay builds them, oldest first.
   * The hot caches start empty, and no count is dirty (a checkpoint holds only counts the log holds).
   */
  protected adopt(packed: PackedKeydir): void {
    const capacity = packed.codeLen.length;
    for (const column of [packed.urlLen, packed.created, packed.retention, packed.untracked, packed.limit, packed.urlHash]) {
      if (column.length !== capacity) throw new Error('checkpoint columns of different lengths');
    }
    this.seed = packed.seed;
    this.slots = packed.slots;
    this.live = packed.slots;
    this.used = packed.used;
    this.arena = packed.arena;
    this.codeLen = packed.codeLen;
    this.urlLen = packed.urlLen;
    this.created = packed.created;
    this.retention = packed.retention;
    this.untrackedCount = packed.untracked;
    this.limit = packed.limit;
    this.urlHash = packed.urlHash;
    this.offset = packed.used > OFFSET32_MAX ? new Float64Array(capacity) : new Uint32Array(capacity);
    let at = 0;
    for (let s = 0; s < packed.slots; s++) {
      this.offset[s] = at;
      at += packed.codeLen[s]! + packed.urlLen[s]!;
    }
    if (at !== packed.used) throw new Error('checkpoint arena and lengths disagree');
    this.flags = new Uint8Array(capacity).fill(LIVE, 0, packed.slots);
    const { chains } = packed;
    if (chains === undefined) this.rebuildChains(capacity);
    else {
      this.codeChains = new HashChains(capacity, chains.code);
      this.urlChains = new HashChains(capacity, chains.url);
    }
    const referrers = new Referrers();
    for (const [n, host] of packed.referrers) referrers.define(n, host);
    this.events = LinkEvents.fromImage(packed.events, referrers);
    this.labelled = new Map(packed.labels);
    this.accessKeys = KeyTable.of(packed.keys);
    this.domains = DomainTable.of(packed.domains);
    this.orphans = OrphanTable.of(packed.orphans);
    this.webhooks = WebhookTable.of(packed.webhooks);
    this.hot.clear();
  }

  /**
   * Takes out the live slot older than `s` that has `s`'s code, if any: what a replay does to a
   * code's older slot when the code is created anew (`Keydir.add`). A compaction's checkpoint can
   * hold both, as its log does (`checkpoint.ts`).
   */
  protected dropOlderTwin(s: number): void {
    const at = this.offset[s]!;
    const len = this.codeLen[s]!;
    const arena = this.arena;
    outer: for (let t = this.codeChains.first(this.codeHashOf(s)); t !== NONE; t = this.codeChains.after(t)) {
      if (t >= s || this.codeLen[t] !== len) continue;
      const other = this.offset[t]!;
      for (let i = 0; i < len; i++) if (arena[other + i] !== arena[at + i]) continue outer;
      this.remove(t);
      return;
    }
  }
}

/**
 * A listing of the store, taken as the store was when asked and read in slices: a long listing is sent across many
 * event-loop turns, and must show each record as it was when the list was taken.
 */
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Keydir, StoredRecord } from './keydir.ts';

/**
 * A frozen list of records, newest first: readable across event-loop turns (a long listing is
 * sent in slices), showing each record as it was when the list was taken, visit counts aside.
 * Call `release` when done: until then deleted records keep their memory. An edit made meanwhile
 * shows in slices read after it (the record is the same link, changed in place).
 */
export interface Snapshot {
  readonly length: number;
  /** The records at positions [from, to). */
  slice(from: number, to: number): StoredRecord[];
  release(): void;
}

/**
 * The live slots of `records` for which `keep(slot fields)` holds, newest first. The caller keeps
 * slots from being renumbered until `released` is called (once, however often `release` is).
 */
export function takeSnapshot(records: Keydir, keep: Keep, released: () => void): Snapshot | Promise<Snapshot> {
  const slots = liveSlots(records, keep);
  if (slots instanceof Int32Array) return snapshotOf(records, slots, slots.length, released);
  return slots.then((taken) => snapshotOf(records, taken, taken.length, released));
}

/** What a search keeps: each criterion given narrows it, none given keeps every live record. */
export interface SearchFilter {
  q?: string | undefined;
  tags?: readonly string[] | undefined;
  /** The `id` of the key that made the records (an editor's own links). */
  author?: string | undefined;
  /** The records of this domain: null the default one (`ListQuery.domain`). */
  domain?: string | null | undefined;
}

/**
 * `takeSnapshot` narrowed to the records whose code, URL or title contains `q` (compared in lower
 * case: `toLowerCase()` of both sides), when given, that have every tag of `tags`, when given, and
 * that `author` made, when given, and of the domain `domain` names, when given.
 * The slots are taken at once; they are then tested a slice of time per event-loop turn, so that
 * searching a million links never holds the loop for long.
 */
export async function searchSnapshot(records: Keydir, keep: Keep, { q, tags, author, domain }: SearchFilter, released: () => void): Promise<Snapshot> {
  const needle = q?.toLowerCase();
  const prefix = domain === undefined ? undefined : domain === null ? null : Buffer.from(`${domain}/`, 'latin1');
  // An ASCII needle is compared on the stored bytes, with no string per record (see
  // `Keydir.containsFolded`); any other, and a record with other bytes, on the strings.
  const bytes = needle !== undefined && /^[\x00-\x7f]+$/.test(needle) ? Buffer.from(needle, 'latin1') : undefined;
  const slots = await liveSlots(records, keep);
  let n = 0;
  let turn = performance.now();
  for (let i = 0; i < slots.length; i++) {
    if ((i & 255) === 255 && performance.now() - turn > SEARCH_TURN_MS) {
      await nextTurn();
      turn = performance.now();
    }
    const s = slots[i]!;
    if (author !== undefined && !records.isBy(s, author)) continue;
    if (prefix !== undefined && !records.inDomain(s, prefix)) continue;
    if (tags !== undefined && !records.hasTags(s, tags)) continue;
    if (needle === undefined) {
      slots[n++] = s;
      continue;
    }
    // Folded bytes decide for the code and URL when they can (true or false); the title is a string.
    const folded = bytes && records.containsFolded(s, bytes);
    if (folded === true || (folded === false ? records.titleContains(s, needle) : matchesText(records, s, needle))) slots[n++] = s;
  }
  return snapshotOf(records, slots, n, released);
}

/** `q` on the strings: the code, the URL and the title. */
function matchesText(records: Keydir, s: number, needle: string): boolean {
  return records.code(s).toLowerCase().includes(needle) || records.url(s).toLowerCase().includes(needle) || records.titleContains(s, needle);
}

/** How long a search tests records before it lets other work run. */
const SEARCH_TURN_MS = 10;

type Keep = (createdAt: number, retentionDays: number) => boolean;

/** Slots a scan reads between two looks at the clock. */
const SCAN_STEP = 4096;

/**
 * The live slots of `records` for which `keep` holds, newest first: at once when the scan is
 * short, else across event-loop turns, `SEARCH_TURN_MS` at a time. The first scan of a process runs
 * before the compiler has seen this code, at 15–30 ms per 100k links (measured; under 1 ms once
 * compiled), so a store of any size is scanned in turns. The slots scanned are those that existed
 * when it began; one deleted meanwhile, before the scan reached it, is left out as it would have
 * been a moment later. The caller keeps slots from being renumbered until it is done.
 */
function liveSlots(records: Keydir, keep: Keep): Int32Array | Promise<Int32Array> {
  const slots = new Int32Array(records.size);
  let n = 0;
  let s = records.end - 1;
  const scan = (): Int32Array | Promise<Int32Array> => {
    const began = performance.now();
    while (s >= 0) {
      for (const stop = Math.max(-1, s - SCAN_STEP); s > stop; s--) {
        if (records.isLive(s) && keep(records.createdAt(s), records.retentionDays(s))) slots[n++] = s;
      }
      if (s >= 0 && performance.now() - began > SEARCH_TURN_MS) return nextTurn().then(scan);
    }
    return slots.subarray(0, n);
  };
  return scan();
}

function snapshotOf(records: Keydir, slots: Int32Array, n: number, released: () => void): Snapshot {
  let open = true;
  return {
    length: n,
    // A record deleted since is still readable: its slot keeps its bytes until a vacuum, and
    // none runs while a snapshot is open.
    slice: (from, to) => {
      const out: StoredRecord[] = [];
      for (let i = from; i < Math.min(to, n); i++) out.push(records.record(slots[i]!));
      return out;
    },
    release: () => {
      if (open) released();
      open = false;
    },
  };
}

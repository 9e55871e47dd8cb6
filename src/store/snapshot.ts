/**
 * A listing of the store taken at once and read in slices: a long listing is sent across many
 * event-loop turns, and must show each record as it was when the list was taken.
 */
import type { Keydir, StoredRecord } from './keydir.ts';

/**
 * A frozen list of records, newest first: readable across event-loop turns (a long listing is
 * sent in slices), showing each record as it was when the list was taken, visit counts aside.
 * Call `release` when done: until then deleted records keep their memory.
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
export function takeSnapshot(records: Keydir, keep: (createdAt: number, retentionDays: number) => boolean, released: () => void): Snapshot {
  const slots = new Int32Array(records.size);
  let n = 0;
  for (let s = records.end - 1; s >= 0; s--) {
    if (records.isLive(s) && keep(records.createdAt(s), records.retentionDays(s))) slots[n++] = s;
  }
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

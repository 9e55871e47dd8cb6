/**
 * A walk over every link that shares the event loop. A door that needs every link (Shlink's tag
 * stats and its orderings, YOURLS' `stats` and `db-stats`) reads a listing a slice at a time; on
 * the log store each slice is ready at once, so a loop of `await`s never leaves the microtask queue
 * and 100k links would hold the loop, and every redirect, for the whole walk (over a second,
 * measured). Here the loop gets a turn between slices sized to a few milliseconds of the caller's
 * work, whatever a record costs it, and whenever `TURN_MS` of work was done sorting what it kept.
 */
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Records read per slice at most: a slice of the log store's snapshot is a copy this long. */
export const WALK_SLICE = 1000;
/** Work, ms, before the event loop gets a turn (as the list's pacer, `http/pacer.ts`). */
const TURN_MS = 5;
/** Records in a walk's first slice, before their pace is known. */
const FIRST_SLICE = 64;
/** Work, ms, a walk's slice is sized to take. */
const STEP_MS = 3;
/** Items a sort merges between two looks at the clock. */
const MERGE_STEP = 1024;

/** What a walk reads: a listing's count and its slices (`UrlListing`), ready now or later. */
export interface Walkable<R> {
  readonly count: number;
  slice(from: number, to: number): R[] | Promise<R[]>;
}

/** A clock of the current turn: `spent()` gives the loop a turn once `TURN_MS` of work was done. */
function turns(): { spent(): Promise<void> | undefined } {
  let start = performance.now();
  return {
    spent() {
      if (performance.now() - start < TURN_MS) return undefined;
      return nextTurn().then(() => {
        start = performance.now();
      });
    },
  };
}

/**
 * Every record of `listing`, in its order, to `visit` a slice at a time, with the position of the
 * slice's first record. Resolves once every slice was visited; a rejection of a slice or of
 * `visit` stops the walk and rejects. The caller releases the listing.
 *
 * What one record costs is the caller's (Shlink's tag stats count each link's bot visits: 10–15 µs
 * a record, measured), so a slice is sized by time, not by count: the first is small, and each next
 * one is as long as fits `STEP_MS` at the pace of the last, never over `slice`. The loop gets a turn
 * before each slice (the first too, since taking the listing was work): a young-generation
 * collection, 5–15 ms here while a walk runs, then lands between two slices, not on top of a
 * turn's worth of them.
 */
export async function walk<R>(listing: Walkable<R>, visit: (records: R[], from: number) => void | Promise<void>, slice = WALK_SLICE): Promise<void> {
  let size = Math.min(FIRST_SLICE, slice);
  for (let from = 0; from < listing.count; ) {
    await nextTurn();
    const to = Math.min(from + size, listing.count);
    const began = performance.now();
    await visit(await listing.slice(from, to), from);
    const perRecord = (performance.now() - began) / (to - from);
    from = to;
    size = Math.max(1, Math.min(slice, perRecord > 0 ? Math.floor(STEP_MS / perRecord) : slice, 2 * size));
  }
}

/**
 * The records of `listing` at `positions`, in that order: each read alone when they are few (a
 * page), else picked on a walk. What a walk keeps of each record is then only its position and its
 * sort key, not the record: 100k records kept alive make every young-generation collection copy
 * them, which held the loop for tens of milliseconds at a time.
 */
export async function recordsAt<R>(listing: Walkable<R>, positions: readonly number[]): Promise<R[]> {
  const out = new Array<R>(positions.length);
  if (positions.length <= WALK_SLICE) {
    const clock = turns();
    for (let i = 0; i < positions.length; i++) {
      out[i] = (await listing.slice(positions[i]!, positions[i]! + 1))[0]!;
      await clock.spent();
    }
    return out;
  }
  const rank = new Map(positions.map((position, i) => [position, i]));
  await walk(listing, (records, from) => {
    for (let k = 0; k < records.length; k++) {
      const i = rank.get(from + k);
      if (i !== undefined) out[i] = records[k]!;
    }
  });
  return out;
}

/**
 * `items` sorted by `compare`, stably (ties keep their order), the loop getting a turn between
 * parts of the work: runs of `WALK_SLICE` sorted at once, then merged in steps. Sorts in place and
 * returns `items`.
 */
export async function sortInTurns<T>(items: T[], compare: (a: T, b: T) => number): Promise<T[]> {
  const clock = turns();
  const n = items.length;
  for (let lo = 0; lo < n; lo += WALK_SLICE) {
    const run = items.slice(lo, lo + WALK_SLICE).sort(compare);
    for (let k = 0; k < run.length; k++) items[lo + k] = run[k]!;
    await clock.spent();
  }
  let from = items;
  let to = new Array<T>(n);
  for (let width = WALK_SLICE; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      let i = lo;
      let j = mid;
      let k = lo;
      while (k < hi) {
        const end = Math.min(k + MERGE_STEP, hi);
        // The left run first on a tie: the sort is stable.
        for (; k < end; k++) to[k] = j >= hi || (i < mid && compare(from[i]!, from[j]!) <= 0) ? from[i++]! : from[j++]!;
        await clock.spent();
      }
    }
    [from, to] = [to, from];
  }
  if (from !== items) for (let k = 0; k < n; k++) items[k] = from[k]!;
  return items;
}

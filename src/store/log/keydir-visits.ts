/**
 * A slot's visits (docs/analytics.md): its count, which is its untracked visits plus its events
 * (`link-events.ts`), and every way they change: a counted visit, an event added, imported or taken
 * back, a reset, retention, and whether the count is written to the log yet (`DIRTY`).
 *
 * Its own file because the counts are a concern of their own beside the lookups: `Keydir` extends
 * `KeydirVisits`, which extends the checkpoint's image of the columns (`keydir-image.ts`), so a
 * redirect's count reads and writes the same fields directly, through no extra object or call.
 */
import { DIRTY } from './keydir-columns.ts';
import { KeydirImage } from './keydir-image.ts';
import { MAX_COUNT } from '../record-limits.ts';

export abstract class KeydirVisits extends KeydirImage {
  /** The visit count: untracked visits plus events (docs/analytics.md), at most `MAX_COUNT`. */
  visits(s: number): number {
    const n = this.untrackedCount[s]! + this.events.length(s);
    return Math.min(n, MAX_COUNT);
  }

  /** Sets the count, untracked visits included (a visit given back, a test); events stay as they are. */
  setVisits(s: number, count: number): void {
    this.untrackedCount[s] = this.untrackedCount[s]! + count - this.visits(s);
  }

  untracked(s: number): number {
    return this.untrackedCount[s]!;
  }

  /**
   * Sets the untracked visits (a count batch of the log holds them, absolute); the count follows:
   * untracked visits plus the slot's events, the invariant (docs/analytics.md).
   */
  setUntracked(s: number, untracked: number): void {
    this.untrackedCount[s] = untracked;
  }

  /** Adds an event to slot `s` (one more visit); returns its sequence number (`link-events.ts`). */
  addEvent(s: number, time: number, visitor: number, referrer: number, attrs: number): number {
    return this.events.add(s, time, visitor, referrer, attrs);
  }

  /** Adds an imported event: it takes the place of an untracked visit, or adds a visit when none is left. */
  importEvent(s: number, time: number, visitor: number, referrer: number, attrs: number): number {
    if (this.untrackedCount[s]! > 0) this.untrackedCount[s]!--;
    return this.events.add(s, time, visitor, referrer, attrs);
  }

  /** Takes back an event whose write never happened (the visit is given back). */
  takeBackEvent(s: number, time: number, visitor: number, referrer: number, attrs: number): void {
    this.events.takeBack(s, time, visitor, referrer, attrs);
  }

  /** Removes the slot's events and sets its counts to 0 (`DELETE …/visits`); returns the events removed. */
  resetVisits(s: number): number {
    this.untrackedCount[s] = 0;
    return this.events.clear(s);
  }

  /** Moves the slot's events older than `before` to its untracked visits (retention); returns how many. */
  expireEvents(s: number, before: number): number {
    const n = this.events.cut(s, before);
    this.untrackedCount[s] = this.untrackedCount[s]! + n;
    return n;
  }

  /**
   * Counts one visit; true when the slot was clean (the caller queues it for the next flush). The
   * count stops at `MAX_COUNT` (`record-limits.ts`) instead of passing what a record may hold.
   */
  visit(s: number): boolean {
    if (this.visits(s) < MAX_COUNT) this.untrackedCount[s]!++;
    const clean = (this.flags[s]! & DIRTY) === 0;
    this.flags[s]! |= DIRTY;
    return clean;
  }

  /** Marks a slot's count as written (false) or not (true); true when it was clean before. */
  markDirty(s: number, dirty: boolean): boolean {
    const was = (this.flags[s]! & DIRTY) !== 0;
    if (dirty) this.flags[s]! |= DIRTY;
    else this.flags[s]! &= ~DIRTY;
    return !was;
  }
}

/**
 * The top lists of the stats (docs/analytics.md, stats): the ten largest values of a count with
 * the sum of the rest, and the ten links with the most visits, offered one link at a time.
 */
import { TOP_SIZE, type TopList } from './event.ts';

/**
 * The 10 links with the most visits, ties by code, offered one link at a time. A hundred thousand
 * links are not sorted for ten: each is compared with the tenth so far and most go no further, so
 * a caller asks `admits` before it even makes the code's string.
 */
export class TopLinks {
  private readonly top: { code: string; visits: number }[] = [];

  /** Whether a link of `visits` visits might enter (it does if its code wins a tie with the tenth). */
  admits(visits: number): boolean {
    return this.top.length < TOP_SIZE || visits >= this.top[TOP_SIZE - 1]!.visits;
  }

  /** Offers a link (each link once). */
  add(code: string, visits: number): void {
    const top = this.top;
    const entry = { code, visits };
    const before = (a: { code: string; visits: number }, b: { code: string; visits: number }) =>
      a.visits > b.visits || (a.visits === b.visits && a.code < b.code);
    if (top.length === TOP_SIZE && !before(entry, top[TOP_SIZE - 1]!)) return;
    let i = Math.min(top.length, TOP_SIZE - 1);
    if (top.length < TOP_SIZE) top.push(entry);
    while (i > 0 && before(entry, top[i - 1]!)) {
      top[i] = top[i - 1]!;
      i--;
    }
    top[i] = entry;
  }

  list(): { code: string; visits: number }[] {
    return this.top.map((e) => ({ ...e }));
  }
}

/** The 10 largest (ties by value, null first) and the sum of the rest. */
export function topList(counts: ReadonlyMap<string | null, number>): TopList {
  const sorted = [...counts].filter(([, n]) => n > 0).sort(([a, x], [b, y]) => y - x || compareValues(a, b));
  let others = 0;
  for (let i = TOP_SIZE; i < sorted.length; i++) others += sorted[i]![1];
  return { top: sorted.slice(0, TOP_SIZE).map(([value, visits]) => ({ value, visits })), others };
}

function compareValues(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return a < b ? -1 : 1;
}

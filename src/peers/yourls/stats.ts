/**
 * `action=stats` (docs/compat.md#yourls-api): which links YOURLS' `filter` picks. YOURLS sorts its
 * table (`top`: most clicks first, `bottom`: fewest, `last`: newest, `rand`: shuffled) and takes
 * `limit` links from `start`; here the live links pass once, newest first, through a selector that
 * keeps only the links it may still return. Ties keep that order: newest first.
 */
import type { UrlRecord } from '../../links/record.ts';

export type StatsFilter = 'top' | 'bottom' | 'last' | 'rand';

/** YOURLS' filter names; anything else, or none, is `top`. */
const FILTERS: Readonly<Record<string, StatsFilter>> = { top: 'top', bottom: 'bottom', last: 'last', rand: 'rand', random: 'rand' };

export function statsFilter(raw: string | undefined): StatsFilter {
  return (raw !== undefined && Object.hasOwn(FILTERS, raw) ? FILTERS[raw] : undefined) ?? 'top';
}

export interface Selector {
  /** The next live link, in list order (newest first). */
  add(record: UrlRecord): void;
  /** The links picked, in the filter's order. */
  picked(): UrlRecord[];
}

/**
 * A selector of the `limit` links from position `start` of the filter's order. `random` is
 * injectable for tests; `rand` keeps a uniform sample of `start + limit` links (reservoir
 * sampling), shuffles it and drops the first `start`: the same as a slice of a shuffled table.
 */
export function selector(filter: StatsFilter, start: number, limit: number, random: () => number = Math.random): Selector {
  const from = Math.max(0, start);
  const keep = limit > 0 ? from + limit : 0;
  const kept: UrlRecord[] = [];
  let seen = 0;
  if (filter === 'top' || filter === 'bottom') {
    // Sorted, best first; a link enters after the last one at least as good, so ties stay newest first.
    const before =
      filter === 'top' ? (a: UrlRecord, b: UrlRecord) => a.visit_count > b.visit_count : (a: UrlRecord, b: UrlRecord) => a.visit_count < b.visit_count;
    return {
      add(record) {
        if (keep === 0 || (kept.length === keep && !before(record, kept[keep - 1]!))) return;
        let lo = 0;
        let hi = kept.length;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (before(record, kept[mid]!)) hi = mid;
          else lo = mid + 1;
        }
        kept.splice(lo, 0, record);
        if (kept.length > keep) kept.pop();
      },
      picked: () => kept.slice(from),
    };
  }
  if (filter === 'last') {
    return {
      add(record) {
        if (seen >= from && seen < keep) kept.push(record);
        seen++;
      },
      picked: () => kept,
    };
  }
  return {
    add(record) {
      seen++;
      if (kept.length < keep) kept.push(record);
      else if (keep > 0) {
        const slot = Math.floor(random() * seen);
        if (slot < keep) kept[slot] = record;
      }
    },
    picked() {
      const shuffled = [...kept];
      for (let i = shuffled.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
      }
      return shuffled.slice(from);
    },
  };
}

/**
 * The rows of the stats statement (`visit-statements.ts`) as the `VisitStats` the routes answer:
 * every bucket in order, the empty ones as zeros, and each top list's `others` as the rest of the
 * visits. A pure function, tested without a database.
 */
import type { TopList, VisitStats } from '../../visits/event.ts';
import type { StatsRow } from './visit-statements.ts';

const TOPS = ['referrer', 'country', 'browser', 'os', 'device'] as const;

/** Undefined when the rows have no `link` row: the link is not live. */
export function statsOf(rows: readonly StatsRow[], buckets: number, allLinks: boolean): VisitStats | undefined {
  const link = rows.find((r) => r.kind === 'link');
  if (link === undefined) return undefined;
  const total = rows.find((r) => r.kind === 'total');
  const visits = Number(total?.n ?? 0);
  const series = Array.from({ length: buckets }, () => ({ visits: 0, uniqueVisitors: 0 }));
  const tops = new Map<StatsRow['kind'], { value: string | null; visits: number }[]>();
  for (const row of rows) {
    if (row.kind === 'bucket') {
      const at = Number(row.value);
      if (at >= 0 && at < buckets) series[at] = { visits: Number(row.n), uniqueVisitors: Number(row.u) };
    } else if (row.kind !== 'link' && row.kind !== 'total') {
      const list = tops.get(row.kind) ?? [];
      list.push({ value: row.value, visits: Number(row.n) });
      tops.set(row.kind, list);
    }
  }
  const topList = (kind: StatsRow['kind']): TopList => {
    const top = tops.get(kind) ?? [];
    return { top, others: visits - top.reduce((sum, t) => sum + t.visits, 0) };
  };
  const [referrers, countries, browsers, os, devices] = TOPS.map(topList) as [TopList, TopList, TopList, TopList, TopList];
  return {
    visitCount: Number(link.n),
    untracked: Number(link.u),
    visits,
    uniqueVisitors: Number(total?.u ?? 0),
    bots: Number(total?.b ?? 0),
    series,
    referrers,
    countries,
    browsers,
    os,
    devices,
    ...(allLinks && { links: (tops.get('links') ?? []).map((t) => ({ code: t.value!, visits: t.visits })) }),
  };
}

/**
 * The metric families of several worker processes of one machine added up into one scrape
 * (docs/scale-out.md): counters and histogram buckets are summed sample by sample (same name, same
 * labels), so `shortener_http_requests_total` counts every request the machine answered whichever
 * worker takes the scrape. A gauge says how it combines in `GAUGES`: the memory of the processes
 * adds up, but every worker sees the same links in the one database, and a lag is as bad as the
 * worst one.
 */
import type { Family, HistogramSample, Labels, Sample } from './prometheus.ts';

export type GaugeMerge = 'sum' | 'max';

/** How each gauge of several processes becomes one value; a gauge not listed is summed. */
export const GAUGES: Readonly<Record<string, GaugeMerge>> = {
  process_resident_memory_bytes: 'sum',
  shortener_links: 'max',
  nodejs_eventloop_lag_seconds: 'max',
  // The outbox of the database the workers share, which each of them reports whole.
  shortener_webhook_pending: 'max',
};

const labelKey = (labels: Labels): string => JSON.stringify(labels);
const byKey = <T extends { labels: Labels }>(a: T, b: T): number => {
  const [x, y] = [labelKey(a.labels), labelKey(b.labels)];
  return x < y ? -1 : x > y ? 1 : 0;
};

/**
 * One list of families from the lists of several processes, in the order of the first list that
 * has each family (every worker runs the same code, so the order is the same everywhere). Samples
 * of a family are ordered by their labels: the scrape reads the same whichever worker answers.
 */
export function mergeFamilies(lists: readonly (readonly Family[])[]): Family[] {
  const merged = new Map<string, Family>();
  for (const families of lists) {
    for (const family of families) {
      const seen = merged.get(family.name);
      merged.set(family.name, seen === undefined ? copy(family) : add(seen, family));
    }
  }
  return [...merged.values()].map((f) =>
    f.type === 'histogram' ? { ...f, samples: [...f.samples].sort(byKey) } : { ...f, samples: [...f.samples].sort(byKey) },
  );
}

function copy(family: Family): Family {
  if (family.type === 'histogram') return { ...family, samples: family.samples.map((s) => ({ labels: s.labels, counts: [...s.counts], sum: s.sum })) };
  return { ...family, samples: family.samples.map((s) => ({ labels: s.labels, value: s.value })) };
}

function add(into: Family, other: Family): Family {
  if (into.type !== other.type) throw new Error(`metric ${into.name} is a ${into.type} in one process and a ${other.type} in another`);
  if (into.type === 'histogram' && other.type === 'histogram') {
    if (into.bounds.join() !== other.bounds.join()) throw new Error(`histogram ${into.name} has different buckets in two processes`);
    const samples = new Map(into.samples.map((s) => [labelKey(s.labels), s] as const));
    for (const s of other.samples) {
      const seen = samples.get(labelKey(s.labels));
      samples.set(labelKey(s.labels), seen ? sumHistograms(seen, s) : s);
    }
    return { ...into, samples: [...samples.values()] };
  }
  const how: GaugeMerge = into.type === 'gauge' ? (GAUGES[into.name] ?? 'sum') : 'sum';
  const samples = new Map((into.samples as readonly Sample[]).map((s) => [labelKey(s.labels), s] as const));
  for (const s of other.samples as readonly Sample[]) {
    const seen = samples.get(labelKey(s.labels));
    const value = seen === undefined ? s.value : how === 'max' ? Math.max(seen.value, s.value) : seen.value + s.value;
    samples.set(labelKey(s.labels), { labels: s.labels, value });
  }
  return { ...into, samples: [...samples.values()] } as Family;
}

function sumHistograms(a: HistogramSample, b: HistogramSample): HistogramSample {
  return { labels: a.labels, counts: a.counts.map((n, i) => n + (b.counts[i] ?? 0)), sum: a.sum + b.sum };
}

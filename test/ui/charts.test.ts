/**
 * The UI's chart module (`static/charts.js`) in Node, without a browser: it is pure functions from
 * figures to a tree of SVG elements. The y axis steps are whole and cover the largest bucket; the
 * bars fill the plot in proportion; the x labels never overlap, stay inside the chart and always
 * name the newest bucket, at 375 and 1280 px for every range the page asks, named as the page names
 * them (`static/stats-names.js`: a month with its full year); the pointer finds its bucket; and text
 * becomes text nodes, never markup.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

type Tree = [string, Record<string, string | number>, ...(Tree | string)[]];
interface Bucket {
  start: number;
  visits: number;
  unique_visitors: number;
}
interface Options {
  width: number;
  height: number;
  label: (start: number) => string;
  name?: string;
}
interface Layout {
  plot: { x: number; y: number; w: number; h: number };
  band: number;
  bars: { x: number; y: number; w: number; h: number }[];
  labels: { index: number; text: string; x: number; anchor: 'start' | 'middle' | 'end' }[];
  ticks: { value: number; y: number }[];
}
interface Charts {
  CHAR_WIDTH: number;
  niceTicks(max: number, count?: number): number[];
  seriesLayout(series: Bucket[], options: Options): Layout;
  seriesChart(series: Bucket[], options: Options): Tree;
  bucketAt(layout: Layout, x: number, count: number): number | undefined;
  shareBar(fraction: number): Tree;
  toNodes(doc: unknown, tree: Tree | string): unknown;
}

type Names = Record<'hour' | 'day' | 'month', { unit: string; axis: Intl.DateTimeFormatOptions; full: Intl.DateTimeFormatOptions }>;

// Plain ES modules served to the browser as they are: loaded here by their URLs, typed by hand above.
const charts = (await import(new URL('../../static/charts.js', import.meta.url).href)) as Charts;
const { BUCKET_NAMES } = (await import(new URL('../../static/stats-names.js', import.meta.url).href)) as { BUCKET_NAMES: Names };
/** How the page names a bucket of `interval`, in English and UTC (the page uses the browser's language and the stats' zone). */
const bucketName = (interval: keyof Names, kind: 'axis' | 'full') => new Intl.DateTimeFormat('en-US', { ...BUCKET_NAMES[interval][kind], timeZone: 'UTC' });

const series = (visits: number[]): Bucket[] => visits.map((v, i) => ({ start: 1_715_000_000 + i * 86_400, visits: v, unique_visitors: v }));
const find = (tree: Tree, cls: string): Tree[] => {
  const out: Tree[] = [];
  const walk = (t: Tree | string) => {
    if (typeof t === 'string') return;
    if (t[1]['class'] === cls) out.push(t);
    for (const c of t.slice(2) as (Tree | string)[]) walk(c);
  };
  walk(tree);
  return out;
};

test('y ticks: whole steps of 1, 2 or 5 × 10ⁿ from 0 to the first at or above the largest bucket', () => {
  assert.deepEqual(charts.niceTicks(0), [0, 1]);
  assert.deepEqual(charts.niceTicks(1), [0, 1]);
  assert.deepEqual(charts.niceTicks(4), [0, 1, 2, 3, 4]);
  assert.deepEqual(charts.niceTicks(10), [0, 5, 10]);
  assert.deepEqual(charts.niceTicks(11), [0, 5, 10, 15]);
  assert.deepEqual(charts.niceTicks(29), [0, 10, 20, 30]);
  assert.deepEqual(charts.niceTicks(1234), [0, 500, 1000, 1500]);
  for (let max = 1; max < 5000; max += 37) {
    const ticks = charts.niceTicks(max);
    assert.ok(ticks.at(-1)! >= max && ticks.at(-2)! < max, `${max}: ${ticks}`);
    assert.ok(ticks.length <= 6 && ticks.every(Number.isInteger), `${max}: ${ticks}`);
  }
});

test('bars: one per bucket, inside the plot, heights in proportion to the visits', () => {
  const layout = charts.seriesLayout(series([0, 5, 10, 2]), { width: 400, height: 200, label: () => 'x' });
  const { plot, bars } = layout;
  assert.equal(bars.length, 4);
  assert.equal(layout.ticks.at(-1)!.value, 10);
  assert.equal(bars[0]!.h, 0);
  assert.ok(Math.abs(bars[2]!.h - plot.h) < 1e-9, 'the largest bucket reaches the top tick');
  assert.ok(Math.abs(bars[1]!.h - plot.h / 2) < 1e-9);
  for (const b of bars) {
    assert.ok(b.x >= plot.x && b.x + b.w <= plot.x + plot.w + 1e-9);
    assert.ok(Math.abs(b.y + b.h - (plot.y + plot.h)) < 1e-9, 'every bar stands on the axis');
  }
});

test('x labels: apart, inside the chart, the newest bucket always named, for every range at 375 and 1280 px', () => {
  const [hour, day, month] = [bucketName('hour', 'axis'), bucketName('day', 'axis'), bucketName('month', 'axis')];
  const cases: [number, number, Intl.DateTimeFormat][] = [
    [24, 3_600, hour],
    [7, 86_400, day],
    [30, 86_400, day],
    [90, 86_400, day],
    [12, 31 * 86_400, month],
    [400, 31 * 86_400, month],
  ];
  for (const width of [343, 375, 1246]) {
    for (const [count, step, format] of cases) {
      const buckets = Array.from({ length: count }, (_, i) => ({ start: 1_700_000_000 + i * step, visits: i % 7, unique_visitors: 0 }));
      const { labels } = charts.seriesLayout(buckets, { width, height: 200, label: (s) => format.format(s * 1000) });
      const where = `${count} buckets at ${width} px`;
      assert.ok(labels.length >= Math.min(3, count), where);
      assert.equal(labels.at(-1)!.index, count - 1, where);
      const spans = labels.map((l) => {
        const w = l.text.length * charts.CHAR_WIDTH;
        const left = l.anchor === 'start' ? l.x : l.anchor === 'end' ? l.x - w : l.x - w / 2;
        return [left, left + w] as const;
      });
      for (const [left, right] of spans) assert.ok(left >= 0 && right <= width, `${where}: ${left}–${right}`);
      for (let i = 1; i < spans.length; i++) assert.ok(spans[i]![0] > spans[i - 1]![1], `${where}: labels ${i - 1} and ${i}`);
    }
  }
});

test('a month is named with its full year on the axis, under the pointer and in the table ("Oct 2026", never "Oct 26", which reads as a day); days and hours keep theirs', () => {
  const october = Date.UTC(2026, 9, 1);
  assert.equal(bucketName('month', 'axis').format(october), 'Oct 2026');
  assert.equal(bucketName('month', 'full').format(october), 'October 2026');
  for (const kind of ['axis', 'full'] as const) assert.ok(BUCKET_NAMES.month[kind].year === 'numeric', `${kind}: a four-digit year`);
  const may15 = Date.UTC(2024, 4, 15, 12);
  assert.equal(bucketName('day', 'axis').format(may15), 'May 15');
  assert.equal(bucketName('day', 'full').format(may15), 'Wed, May 15, 2024');
  assert.equal(bucketName('hour', 'axis').format(may15), '12:00 PM');
  assert.equal(bucketName('hour', 'full').format(may15), 'Wed, May 15, 12:00 PM');
});

test('the chart tree: an SVG at the given size with its name, a bar per bucket, a hidden cursor; the pointer finds its bucket', () => {
  const data = series([3, 0, 1, 7, 2]);
  const options = { width: 500, height: 240, label: (s: number) => `d${s % 1000}`, name: 'Visits per day' };
  const tree = charts.seriesChart(data, options);
  assert.equal(tree[0], 'svg');
  assert.deepEqual(
    [tree[1]['width'], tree[1]['height'], tree[1]['viewBox'], tree[1]['role'], tree[1]['aria-label']],
    [500, 240, '0 0 500 240', 'img', 'Visits per day'],
  );
  assert.equal(JSON.stringify(tree).includes('"style"'), false, 'no style attribute: the CSP refuses them');
  assert.equal(find(tree, 'bar').length, 5);
  assert.equal(find(tree, 'cursor')[0]![1]['visibility'], 'hidden');
  const layout = charts.seriesLayout(data, options);
  for (let i = 0; i < 5; i++) assert.equal(charts.bucketAt(layout, layout.plot.x + (i + 0.5) * layout.band, 5), i);
  assert.equal(charts.bucketAt(layout, layout.plot.x - 1, 5), undefined);
  assert.equal(charts.bucketAt(layout, layout.plot.x + layout.plot.w + 1, 5), undefined);
});

test('a share bar is clamped to 0–100 % and hidden from screen readers', () => {
  const width = (f: number) => (charts.shareBar(f)[3] as Tree)[1]['width'];
  assert.equal(width(0.5), 50);
  assert.equal(width(1 / 3), 33.3);
  assert.equal(width(2), 100);
  assert.equal(width(-1), 0);
  assert.equal(charts.shareBar(0.5)[1]['aria-hidden'], 'true');
});

test('toNodes: SVG elements in the SVG namespace, attributes as given, text as text nodes (never parsed as markup)', () => {
  type Fake = { ns?: string; name?: string; text?: string; attrs: Record<string, string>; children: Fake[] };
  const doc = {
    createElementNS: (ns: string, name: string) => {
      const node: Fake & { setAttribute(k: string, v: string): void; append(c: Fake): void } = {
        ns,
        name,
        attrs: {},
        children: [],
        setAttribute: (k, v) => void (node.attrs[k] = v),
        append: (c) => void node.children.push(c),
      };
      return node;
    },
    createTextNode: (text: string) => ({ text, attrs: {}, children: [] }),
  };
  const node = charts.toNodes(doc, ['svg', { width: 10 }, ['text', { x: 1 }, '<script>alert(1)</script>']]) as Fake;
  assert.equal(node.ns, 'http://www.w3.org/2000/svg');
  assert.deepEqual(node.attrs, { width: '10' });
  assert.equal(node.children[0]!.name, 'text');
  assert.deepEqual(node.children[0]!.children[0], { text: '<script>alert(1)</script>', attrs: {}, children: [] });
});

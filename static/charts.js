// The stats charts (docs/ui.md, stats), drawn by our own code: pure functions from figures to a
// small tree of SVG elements, `[name, {attributes}, ...children]` (a child is a tree or a text).
// Nothing here touches the DOM, so Node tests read the trees as they are; the page turns them into
// nodes with `toNodes`. Colours come from the stylesheet through class names (light and dark), never
// from here, and no `style` attribute is written (the Content-Security-Policy would refuse it).

const SVG_NS = 'http://www.w3.org/2000/svg';

/** Pixels a character of the axis labels takes at most (12 px system font), to keep labels apart. */
export const CHAR_WIDTH = 7;
const FONT_SIZE = 12;
const MARGIN = { top: 10, right: 10, bottom: 26 };

/**
 * Where the y axis has its lines: 0, then steps of 1, 2 or 5 × 10ⁿ (visits are whole numbers, so no
 * step is below 1), up to the first step at or above `max`, with at most `count` steps.
 */
export function niceTicks(max, count = 4) {
  if (!(max > 0)) return [0, 1];
  const rough = max / count;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = Math.max(
    1,
    [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough),
  );
  const ticks = [];
  for (let v = 0; v < max + step; v += step) ticks.push(v);
  return ticks;
}

/** Every how many buckets an x label fits, when each takes `labelWidth` px and a bucket `band` px. */
export function labelEvery(band, labelWidth) {
  return Math.max(1, Math.ceil((labelWidth + CHAR_WIDTH * 2) / band));
}

/**
 * Where everything of a time-series chart goes, for `series` (`[{start, visits, unique_visitors}]`)
 * drawn `width` × `height` px. `label(start)` is a bucket's short name on the x axis. The bars
 * keep a gap while there is room for one; the labels are thinned so none overlap.
 */
export function seriesLayout(series, { width, height, label }) {
  const ticks = niceTicks(Math.max(0, ...series.map((b) => b.visits)));
  const top = ticks[ticks.length - 1];
  const left = Math.max(...ticks.map((t) => String(t).length)) * CHAR_WIDTH + 10;
  const plot = { x: left, y: MARGIN.top, w: Math.max(1, width - left - MARGIN.right), h: Math.max(1, height - MARGIN.top - MARGIN.bottom) };
  const band = plot.w / Math.max(1, series.length);
  const gap = band >= 4 ? Math.min(band * 0.2, 6) : 0;
  const y = (v) => plot.y + plot.h - (v / top) * plot.h;
  const bars = series.map((b, i) => ({ x: plot.x + i * band + gap / 2, y: y(b.visits), w: Math.max(1, band - gap), h: plot.y + plot.h - y(b.visits) }));
  const names = series.map((b) => label(b.start));
  const every = labelEvery(band, Math.max(0, ...names.map((n) => n.length)) * CHAR_WIDTH);
  // The labels are counted back from the newest bucket, so the latest one is always named.
  const labels = [];
  let next = Infinity;
  for (let i = series.length - 1; i >= 0; i -= every) {
    const w = names[i].length * CHAR_WIDTH;
    const centre = plot.x + (i + 0.5) * band;
    // Centred under its bucket, unless that would cross an edge of the chart: then held to the edge.
    const place = centre - w / 2 < 0 ? { x: 0, anchor: 'start' } : centre + w / 2 > width ? { x: width, anchor: 'end' } : { x: centre, anchor: 'middle' };
    const left = place.anchor === 'start' ? 0 : place.anchor === 'end' ? width - w : centre - w / 2;
    // One held to an edge moves toward its neighbour (up to half its width): too close, the neighbour goes.
    if (left + w + CHAR_WIDTH > next) continue;
    next = left;
    labels.unshift({ index: i, text: names[i], ...place });
  }
  return { plot, band, bars, labels, ticks: ticks.map((value) => ({ value, y: y(value) })) };
}

/**
 * A time-series chart as an SVG tree: the y axis with its grid lines, one bar per bucket, the x
 * labels, and a hidden band (`.cursor`) that the page moves behind the bucket the pointer or the
 * keyboard is on. `name` is what a screen reader hears; the figures are in the table beside it.
 */
export function seriesChart(series, { width, height, label, name }) {
  const layout = seriesLayout(series, { width, height, label });
  const { plot, band, bars, labels, ticks } = layout;
  const grid = ticks.map((t) => [
    'g',
    { class: 'tick' },
    ['line', { x1: plot.x, x2: plot.x + plot.w, y1: round(t.y), y2: round(t.y) }],
    ['text', { x: plot.x - 6, y: round(t.y), dy: '0.32em', 'text-anchor': 'end' }, String(t.value)],
  ]);
  const marks = bars.map((b, i) => ['rect', { class: 'bar', x: round(b.x), y: round(b.y), width: round(b.w), height: round(b.h), 'data-index': i }]);
  const names = labels.map((l) => ['text', { x: round(l.x), y: plot.y + plot.h + 18, 'text-anchor': l.anchor }, l.text]);
  return [
    'svg',
    { class: 'series', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': name, 'font-size': FONT_SIZE },
    ['g', { class: 'grid' }, ...grid],
    ['rect', { class: 'cursor', x: plot.x, y: plot.y, width: round(band), height: plot.h, visibility: 'hidden' }],
    ['g', { class: 'bars' }, ...marks],
    ['line', { class: 'axis', x1: plot.x, x2: plot.x + plot.w, y1: plot.y + plot.h, y2: plot.y + plot.h }],
    ['g', { class: 'labels' }, ...names],
  ];
}

/** The bucket under the pointer at `x` px from the chart's left edge (undefined: outside the plot). */
export function bucketAt(layout, x, count) {
  const i = Math.floor((x - layout.plot.x) / layout.band);
  return i >= 0 && i < count ? i : undefined;
}

/** A bar of a top list: `fraction` (0–1) of the full width, drawn in the accent colour. Decoration only. */
export function shareBar(fraction) {
  const width = Math.round(Math.max(0, Math.min(1, fraction)) * 1000) / 10;
  return [
    'svg',
    { class: 'share', viewBox: '0 0 100 8', preserveAspectRatio: 'none', 'aria-hidden': 'true', focusable: 'false' },
    ['rect', { class: 'track', width: 100, height: 8 }],
    ['rect', { class: 'bar', width, height: 8 }],
  ];
}

const round = (n) => Math.round(n * 10) / 10;

/** The nodes of a tree made by this module, in `doc` (SVG elements; text as text, never as markup). */
export function toNodes(doc, tree) {
  if (typeof tree === 'string') return doc.createTextNode(tree);
  const [name, attributes, ...children] = tree;
  const node = doc.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  for (const child of children) node.append(toNodes(doc, child));
  return node;
}

// The chart of visits over time in the page (docs/ui.md, stats): `charts.js` draws it at the box's
// width, this module redraws it when the width changes and reads it out under the pointer or the
// keyboard; a table after it has every figure for a screen reader.

import { bucketAt, seriesChart, seriesLayout, toNodes } from './charts.js';
import { $, el } from './dom.js';
import { BUCKET_NAMES, dateFormat, plural } from './stats-names.js';

/** The chart shown (null: none), with what it needs to redraw and the bucket under the pointer. */
let shown = null;

/** No chart until the next figures: a view of another link starts blank. */
export function clearChart() {
  shown = null;
}

/** The series shown: every bucket, except that "all" starts at the first bucket with a visit. */
export function shownSeries(view, stats) {
  if (view?.range !== 'all') return stats.series;
  const first = stats.series.findIndex((b) => b.visits > 0);
  return first < 0 ? [] : stats.series.slice(first);
}

/** The table of every bucket, for a screen reader. */
function seriesTable(caption, names, series, fullName) {
  return el(
    'table',
    { id: 'stats-series-table' },
    el('caption', { textContent: caption }),
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        ...[names.unit.charAt(0).toUpperCase() + names.unit.slice(1), 'Visits', 'Unique visitors'].map((h) => el('th', { scope: 'col', textContent: h })),
      ),
    ),
    el(
      'tbody',
      {},
      ...series.map((b) =>
        el(
          'tr',
          {},
          el('th', { scope: 'row', textContent: fullName(b.start) }),
          el('td', { textContent: String(b.visits) }),
          el('td', { textContent: String(b.unique_visitors) }),
        ),
      ),
    ),
  );
}

export function renderChart(view, stats) {
  const box = $('stats-chart');
  const series = shownSeries(view, stats);
  const names = BUCKET_NAMES[stats.interval];
  if (series.every((b) => b.visits === 0)) {
    shown = null;
    box.replaceChildren(el('p', { className: 'empty', textContent: 'No visits in this range.' }));
    return;
  }
  const axis = dateFormat(stats.tz, names.axis);
  const full = dateFormat(stats.tz, names.full);
  const fullName = (start) => full.format(start * 1000);
  const caption = `Visits per ${names.unit}`;
  const table = seriesTable(caption, names, series, fullName);
  const tip = el('p', { className: 'chart-tip', hidden: true, 'aria-live': 'polite' });
  const frame = el('div', { className: 'chart-frame' });
  // Out of sight, not out of reach: a screen reader reads the table (a table ignores a width, so its box is what hides it).
  box.replaceChildren(frame, tip, el('div', { className: 'visually-hidden' }, table));
  const name = `${caption}, ${series.length} ${names.unit}s: ${plural(stats.visits, 'visit')} in all. Arrow keys read each ${names.unit}; the table after the chart has every figure.`;
  shown = { series, stats, axis, fullName, name, frame, tip, width: 0, active: undefined };
  drawChart();
}

/** Draws the chart at its box's width (again when the width changes: labels stay 12 px at 375 and 1280 px). */
export function drawChart() {
  const chart = shown;
  if (!chart) return;
  const width = Math.floor(chart.frame.clientWidth);
  if (width === 0 || width === chart.width) return;
  chart.width = width;
  const options = { width, height: width < 600 ? 180 : 240, label: (start) => chart.axis.format(start * 1000), name: chart.name };
  chart.layout = seriesLayout(chart.series, options);
  const svg = toNodes(document, seriesChart(chart.series, options));
  svg.setAttribute('tabindex', '0');
  svg.addEventListener('pointermove', (event) => point(bucketAt(chart.layout, event.clientX - svg.getBoundingClientRect().left, chart.series.length)));
  svg.addEventListener('pointerleave', () => document.activeElement !== svg && point(undefined));
  svg.addEventListener('focus', () => point(chart.active ?? chart.series.length - 1));
  svg.addEventListener('blur', () => point(undefined));
  svg.addEventListener('keydown', (event) => {
    const last = chart.series.length - 1;
    const moves = { ArrowLeft: -1, ArrowRight: 1, Home: -Infinity, End: Infinity };
    if (!(event.key in moves)) return;
    event.preventDefault();
    point(Math.max(0, Math.min(last, (chart.active ?? last) + moves[event.key])));
  });
  chart.frame.replaceChildren(svg);
  const active = chart.active;
  chart.active = undefined;
  point(active);
}

/** Shows bucket `i` under the pointer or the keyboard: a band behind it and its date and figures. */
function point(i) {
  const chart = shown;
  if (!chart || chart.active === i) return;
  chart.active = i;
  const svg = chart.frame.firstElementChild;
  const cursor = svg.querySelector('.cursor');
  if (i === undefined) {
    cursor.setAttribute('visibility', 'hidden');
    chart.tip.hidden = true;
    return;
  }
  const { plot, band } = chart.layout;
  const bucket = chart.series[i];
  cursor.setAttribute('x', String(plot.x + i * band));
  cursor.setAttribute('width', String(band));
  cursor.setAttribute('visibility', 'visible');
  chart.tip.textContent = `${chart.fullName(bucket.start)}: ${plural(bucket.visits, 'visit')}, ${plural(bucket.unique_visitors, 'unique visitor')}`;
  chart.tip.hidden = false;
  // Centred over the bucket, kept inside the chart (CSSOM positions are allowed by the CSP; style attributes are not).
  const room = chart.frame.clientWidth - chart.tip.offsetWidth;
  chart.tip.style.left = `${Math.max(0, Math.min(room, plot.x + (i + 0.5) * band - chart.tip.offsetWidth / 2))}px`;
}

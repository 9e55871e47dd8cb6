// The stats of a link, and of every link (docs/ui.md, stats): a view of the page with its own
// fragment (`#stats/<code>?range=7d&bots=exclude`, `#stats` for every link), so the back button
// and a reload work. The figures are the API's (`/api/urls/<code>/stats`, `/api/stats`); the charts
// are `charts.js`'s. Every range is asked in the browser's time zone (`tz`).

import { $, API_KEY_KEY, api, el, pending, problem, saveDownload, showError } from './api.js';
import { bucketAt, seriesChart, seriesLayout, shareBar, toNodes } from './charts.js';

const VISITS_PAGE = 20;
const DAY = 86_400;

/** The range picker: name in the fragment, label. */
const RANGES = [
  ['24h', '24 h'],
  ['7d', '7 d'],
  ['30d', '30 d'],
  ['90d', '90 d'],
  ['1y', '1 y'],
  ['all', 'All'],
  ['custom', 'Custom'],
];
const DEFAULT_RANGE = '30d';

const BOTS = [
  ['exclude', 'Exclude'],
  ['include', 'Include'],
  ['only', 'Only bots'],
];

/** The top lists: the stats field, the heading, the column's name, how a value reads (`null` included). */
const TOPS = [
  ['referrers', 'Referrers', 'Referrer', (v) => v ?? 'Direct'],
  ['countries', 'Countries', 'Country', (v) => countryName(v)],
  ['browsers', 'Browsers', 'Browser', (v) => v ?? 'Unknown'],
  ['os', 'Operating systems', 'OS', (v) => v ?? 'Unknown'],
  ['devices', 'Devices', 'Device', (v) => deviceName(v)],
];

/** A bucket's name on the x axis, and in the table and under the pointer, per interval (the page never asks for weeks). */
const BUCKET_NAMES = {
  hour: {
    unit: 'hour',
    axis: { hour: '2-digit', minute: '2-digit' },
    full: { weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' },
  },
  day: { unit: 'day', axis: { day: 'numeric', month: 'short' }, full: { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric' } },
  month: { unit: 'month', axis: { month: 'short', year: '2-digit' }, full: { month: 'long', year: 'numeric' } },
};

const regionNames = new Intl.DisplayNames(undefined, { type: 'region' });

const deviceName = (device) => (device === null ? 'Unknown' : device.charAt(0).toUpperCase() + device.slice(1));

function countryName(code) {
  if (code === null) return 'Unknown';
  try {
    return regionNames.of(code) ?? code;
  } catch {
    return code;
  }
}

const plural = (n, one, many = `${one}s`) => `${n.toLocaleString()} ${n === 1 ? one : many}`;

// ---- The fragment ----------------------------------------------------------------------------

/** The view a fragment names: `{ code (null: every link), range, bots, from?, to? }`, or null (home). */
function parseFragment(hash) {
  const m = /^#stats(?:\/([A-Za-z0-9_-]+))?(?:\?(.*))?$/.exec(hash);
  if (!m) return null;
  const q = new URLSearchParams(m[2] ?? '');
  const range = RANGES.some(([name]) => name === q.get('range')) ? q.get('range') : DEFAULT_RANGE;
  const bots = BOTS.some(([name]) => name === q.get('bots')) ? q.get('bots') : 'exclude';
  const view = { code: m[1] ?? null, range, bots };
  const date = /^\d{4}-\d{2}-\d{2}$/;
  if (range === 'custom') {
    if (!date.test(q.get('from') ?? '') || !date.test(q.get('to') ?? '')) return { ...view, range: DEFAULT_RANGE };
    Object.assign(view, { from: q.get('from'), to: q.get('to') });
  }
  return view;
}

function fragmentOf(view) {
  const q = new URLSearchParams({ range: view.range, bots: view.bots });
  if (view.range === 'custom') {
    q.set('from', view.from);
    q.set('to', view.to);
  }
  return `#stats${view.code ? `/${view.code}` : ''}?${q}`;
}

/** `YYYY-MM-DD` of a local date. */
function isoDate(d) {
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

/** Local midnight `back` days before today (calendar days: a DST day is 23 or 25 hours). */
function daysBack(now, back) {
  const d = new Date(now);
  d.setHours(0, 0, 0, 0);
  d.setDate(d.getDate() - back);
  return d;
}

/**
 * The API's range parameters of a view at `now` (ms): `to` is the current second (the range is
 * `[from, to)`, so it is included) and the server rounds it up to the end of its bucket. 24 h is
 * this hour and the 23 before; 7, 30 and 90 d are today and the days before; 1 y is this month and
 * the 11 before; all is from 1970 by month (the chart starts at the first visit); custom dates are
 * whole days, the last one included.
 */
function rangeParams(view, now) {
  const to = Math.floor(now / 1000) + 1;
  switch (view.range) {
    case '24h':
      return { from: String(to - 23 * 3600), to: String(to), interval: 'hour' };
    case '7d':
    case '30d':
    case '90d':
      return { from: isoDate(daysBack(now, Number.parseInt(view.range, 10) - 1)), to: String(to), interval: 'day' };
    case '1y': {
      const d = daysBack(now, 0);
      d.setDate(1);
      d.setMonth(d.getMonth() - 11);
      return { from: isoDate(d), to: String(to), interval: 'month' };
    }
    case 'all':
      return { from: '0', to: String(to), interval: 'month' };
    default: {
      const last = new Date(`${view.to}T00:00`);
      last.setDate(last.getDate() + 1);
      return { from: view.from, to: isoDate(last) };
    }
  }
}

// ---- The view ---------------------------------------------------------------------------------

const state = {
  view: null,
  /** The stats shown, and how many requests were sent (an older answer arriving late is dropped). */
  stats: null,
  asked: 0,
  visitsOffset: 0,
  visitsShown: { offset: 0, count: 0, total: 0 },
  /** The Stats link that opened the view: the focus goes back to it. */
  opener: null,
  chart: null,
};

const zone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;

function choices(box, name, options) {
  box.replaceChildren(
    ...options.map(([value, text]) => {
      const id = `${name}-${value}`;
      return el('span', { className: 'segment' }, el('input', { type: 'radio', name, id, value }), el('label', { for: id, textContent: text }));
    }),
  );
}

function showControls(view) {
  $(`range-${view.range}`).checked = true;
  $(`bots-${view.bots}`).checked = true;
  $('stats-custom').hidden = view.range !== 'custom';
  if (view.range === 'custom') {
    $('stats-from').value = view.from;
    $('stats-to').value = view.to;
  }
}

/** A view chosen with the controls: the fragment is replaced (the back button leaves the stats). */
function choose(view) {
  history.replaceState(null, '', fragmentOf(view));
  void show(view);
}

/** Shows the home view or the stats a fragment names. */
async function route() {
  const view = parseFragment(location.hash);
  $('home').hidden = view !== null;
  $('stats').hidden = view === null;
  if (view === null) {
    state.view = null;
    if (state.opener?.isConnected) state.opener.focus();
    return;
  }
  const fresh = state.view?.code !== view.code || state.view === null;
  if (fresh) {
    state.stats = null;
    state.chart = null;
    // The parts keep their place while the first figures load (the chart's box has its height).
    for (const id of ['stats-totals', 'stats-chart', 'stats-tops', 'stats-visit-rows']) $(id).replaceChildren();
    $('stats-range').textContent = 'Loading…';
    $('stats-notes').hidden = true;
    $('stats-latest').hidden = true;
    $('stats-body').hidden = true;
    $('stats-link').hidden = true;
    $('stats-title').textContent = view.code ? `Stats of ${view.code}` : 'Stats of all links';
    $('stats-title').focus();
  }
  await show(view);
}

async function show(view) {
  state.view = view;
  showControls(view);
  showError($('stats-error'), '');
  showError($('stats-custom-error'), '');
  if (!sessionStorage.getItem(API_KEY_KEY)) return askKey('');
  $('stats-key-form').hidden = true;
  $('stats-body').hidden = false;
  await load(view);
}

function askKey(message) {
  $('stats-key-form').hidden = false;
  $('stats-body').hidden = true;
  showError($('stats-key-error'), message);
  $('stats-key').focus();
}

/** Loading: the figures shown stay in place, dimmed, under a spinner; nothing moves. */
function busy(on) {
  $('stats-body').setAttribute('aria-busy', String(on));
  $('stats').classList.toggle('loading', on);
}

async function load(view) {
  const asked = ++state.asked;
  const params = new URLSearchParams({ ...rangeParams(view, Date.now()), tz: zone(), bots: view.bots });
  const code = view.code && encodeURIComponent(view.code);
  busy(true);
  try {
    const [res, record] = await Promise.all([
      api(code ? `api/urls/${code}/stats?${params}` : `api/stats?${params}`, { admin: true }),
      code ? api(`api/urls/${code}`) : undefined,
    ]);
    if (asked !== state.asked) return;
    if (res.status === 403) return askKey('That API key was not accepted. Check it and try again.');
    if (res.status === 404) return gone('This link no longer exists (deleted, or expired).');
    if (!res.ok) {
      const { message } = await problem(res);
      if (res.status === 400 && view.range === 'custom') {
        gone('');
        return showError($('stats-custom-error'), message);
      }
      return gone(res.status >= 500 ? `The stats could not be loaded. ${message}` : message);
    }
    const stats = await res.json();
    if (asked !== state.asked) return;
    if (record?.ok) showLink(await record.json());
    state.stats = stats;
    state.visitsOffset = 0;
    render(view, stats);
    if (view.code) await loadVisits(view);
  } catch (err) {
    if (asked === state.asked) gone(err.message);
  } finally {
    if (asked === state.asked) busy(false);
  }
}

/** The figures cannot be shown: say why in words (the figures of before would be read as the range's). */
function gone(message) {
  $('stats-body').hidden = true;
  showError($('stats-error'), message);
}

function showLink(record) {
  const dl = $('stats-link');
  const rows = [
    ...(record.title ? [['Title', record.title]] : []),
    ['Short link', el('a', { href: record.short_url, rel: 'noreferrer', textContent: record.short_url })],
    ['Target', el('a', { href: record.original_url, rel: 'noreferrer', textContent: record.original_url })],
  ];
  dl.replaceChildren(...rows.flatMap(([term, value]) => [el('dt', { textContent: term }), el('dd', {}, value)]));
  dl.hidden = false;
}

// ---- Rendering --------------------------------------------------------------------------------

function dateFormat(tz, options) {
  return new Intl.DateTimeFormat(undefined, { ...options, timeZone: tz });
}

function render(view, stats) {
  $('stats-body').hidden = false;
  const names = BUCKET_NAMES[stats.interval];
  const span = dateFormat(stats.tz, { dateStyle: 'medium', timeStyle: 'short' });
  $('stats-range').textContent =
    view.range === 'all'
      ? `All visits up to ${span.format(stats.to * 1000)}, per ${names.unit} (${stats.tz}).`
      : `${span.formatRange(stats.from * 1000, stats.to * 1000)}, per ${names.unit} (${stats.tz}).`;
  renderTotals(view, stats);
  renderChart(stats);
  renderTops(stats);
}

function renderTotals(view, stats) {
  const term = (text, value, id) => el('div', {}, el('dt', { textContent: text }), el('dd', { id, textContent: value.toLocaleString() }));
  const visitsName = view.bots === 'only' ? 'Bot visits' : 'Visits';
  $('stats-totals').replaceChildren(
    term(visitsName, stats.visits, 'total-visits'),
    term('Unique visitors', stats.unique_visitors, 'total-unique'),
    term(view.code ? 'Visits since created' : 'Visits of every link', stats.visit_count, 'total-count'),
  );
  const notes = [];
  if (view.bots === 'exclude' && stats.bots > 0)
    notes.push(`${plural(stats.bots, 'bot visit')} hidden: crawlers, link previews and scripts such as curl. Choose “Include” under Bots to count them.`);
  if (view.bots === 'include' && stats.bots > 0) notes.push(`Including ${plural(stats.bots, 'bot visit')}.`);
  if (stats.untracked_visits > 0) {
    const all = view.code ? 'since created' : 'of every link';
    notes.push(
      `${plural(stats.untracked_visits, 'visit was', 'visits were')} counted without details (imported counts, or visits from before visit tracking or while it was off): they are in the ${stats.visit_count.toLocaleString()} visits ${all}, not in these figures.`,
    );
  }
  if (stats.tracking === 'counts') notes.push('Visit tracking is off on this service: new visits are counted, not recorded here.');
  $('stats-notes').replaceChildren(...notes.map((text) => el('span', { textContent: text })));
  $('stats-notes').hidden = notes.length === 0;
}

/** The series shown: every bucket, except that "all" starts at the first bucket with a visit. */
function shownSeries(stats) {
  if (state.view?.range !== 'all') return stats.series;
  const first = stats.series.findIndex((b) => b.visits > 0);
  return first < 0 ? [] : stats.series.slice(first);
}

function renderChart(stats) {
  const box = $('stats-chart');
  const series = shownSeries(stats);
  const names = BUCKET_NAMES[stats.interval];
  if (series.every((b) => b.visits === 0)) {
    state.chart = null;
    box.replaceChildren(el('p', { className: 'empty', textContent: 'No visits in this range.' }));
    return;
  }
  const axis = dateFormat(stats.tz, names.axis);
  const full = dateFormat(stats.tz, names.full);
  const fullName = (start) => full.format(start * 1000);
  const caption = `Visits per ${names.unit}`;
  const table = el(
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
  const tip = el('p', { className: 'chart-tip', hidden: true, 'aria-live': 'polite' });
  const frame = el('div', { className: 'chart-frame' });
  // Out of sight, not out of reach: a screen reader reads the table (a table ignores a width, so its box is what hides it).
  box.replaceChildren(frame, tip, el('div', { className: 'visually-hidden' }, table));
  const name = `${caption}, ${series.length} ${names.unit}s: ${plural(stats.visits, 'visit')} in all. Arrow keys read each ${names.unit}; the table after the chart has every figure.`;
  state.chart = { series, stats, axis, fullName, name, frame, tip, width: 0, active: undefined };
  drawChart();
}

/** Draws the chart at its box's width (again when the width changes: labels stay 12 px at 375 and 1280 px). */
function drawChart() {
  const chart = state.chart;
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
  const chart = state.chart;
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

/** A top list as a table: each value over its bar, its visits beside it; "Others" for the rest. */
function topTable(caption, column, list, name, total, linkOf) {
  const row = (label, visits, muted) =>
    el(
      'tr',
      muted ? { className: 'others' } : {},
      el('th', { scope: 'row' }, el('span', { className: 'value' }, label), toNodes(document, shareBar(total > 0 ? visits / total : 0))),
      el('td', { className: 'num', textContent: visits.toLocaleString() }),
    );
  const rows = list.top.map((entry) => row(linkOf ? linkOf(entry.value) : name(entry.value), entry.visits, false));
  if (list.others > 0) rows.push(row('Others', list.others, true));
  const body = rows.length > 0 ? rows : [el('tr', {}, el('td', { colspan: '2', className: 'empty', textContent: 'None in this range.' }))];
  return el(
    'table',
    { className: 'toplist' },
    el('caption', { textContent: caption }),
    el('thead', {}, el('tr', {}, el('th', { scope: 'col', textContent: column }), el('th', { scope: 'col', className: 'num', textContent: 'Visits' }))),
    el('tbody', {}, ...body),
  );
}

function renderTops(stats) {
  const tables = [];
  if (stats.links) {
    const links = { top: stats.links.map((l) => ({ value: l.short_code, visits: l.visits })), others: 0 };
    const linkOf = (code) => el('a', { href: fragmentOf({ ...state.view, code }), 'aria-label': `Stats of ${code}`, textContent: code });
    tables.push(topTable('Top links', 'Link', links, String, stats.visits, linkOf));
  }
  for (const [field, caption, column, name] of TOPS) tables.push(topTable(caption, column, stats[field], name, stats.visits));
  $('stats-tops').replaceChildren(...tables);
}

// ---- Latest visits and the download -------------------------------------------------------------

/** The range of the figures shown, for the visits routes (which neither round nor default it). */
function shownRange() {
  const { from, to } = state.stats;
  return { from: String(Math.max(0, from)), to: String(to), bots: state.view.bots };
}

async function loadVisits(view) {
  const query = new URLSearchParams({ ...shownRange(), limit: String(VISITS_PAGE), offset: String(state.visitsOffset) });
  const res = await api(`api/urls/${encodeURIComponent(view.code)}/visits?${query}`, { admin: true });
  if (view !== state.view) return;
  if (res.status === 404) return gone('This link no longer exists (deleted, or expired).');
  if (!res.ok) return showError($('stats-error'), (await problem(res)).message);
  const total = Number(res.headers.get('X-Total-Count') ?? 0);
  const { visits } = await res.json();
  const when = dateFormat(state.stats.tz, { dateStyle: 'medium', timeStyle: 'medium' });
  const cells = (v) => [
    ['Time', when.format(v.time * 1000)],
    ['Referrer', v.referrer ?? 'Direct'],
    ['Country', countryName(v.country)],
    ['Browser', v.browser ?? 'Unknown'],
    ['OS', v.os ?? 'Unknown'],
    ['Device', deviceName(v.device)],
    ['Bot', v.bot ? 'Yes' : 'No'],
  ];
  $('stats-visit-rows').replaceChildren(
    ...visits.map((v) => el('tr', {}, ...cells(v).map(([label, text]) => el('td', { 'data-label': label, textContent: text })))),
  );
  const offset = state.visitsOffset;
  $('stats-latest-summary').textContent =
    total === 0 ? 'No visits in this range.' : `Visits ${offset + 1}–${offset + visits.length} of ${total.toLocaleString()}, newest first.`;
  $('stats-latest').hidden = false;
  state.visitsShown = { offset, count: visits.length, total };
  updateVisitsPager();
}

/** Newer/Older as the page shown allows (also once a pending pager button is given back). */
function updateVisitsPager() {
  const { offset, count, total } = state.visitsShown;
  $('visits-prev').disabled = offset === 0;
  $('visits-next').disabled = offset + count >= total;
}

function pageVisits(button, step) {
  state.visitsOffset = Math.max(0, state.visitsOffset + step);
  const view = state.view;
  void pending(button, () => loadVisits(view)).then(updateVisitsPager);
}

function download(button, format) {
  showError($('stats-download-error'), '');
  void pending(button, async () => {
    try {
      const query = new URLSearchParams({ format, ...shownRange() });
      if (state.view.code) query.set('code', state.view.code);
      const res = await api(`api/visits/export?${query}`, { admin: true });
      if (!res.ok) throw new Error((await problem(res)).message);
      await saveDownload(res, `visits.${format}`);
    } catch (err) {
      showError($('stats-download-error'), err.message);
    }
  });
}

// ---- Start ------------------------------------------------------------------------------------

/** Wires the controls and shows the view the fragment names (a reload lands where it was). */
export function startStats() {
  choices($('stats-ranges'), 'range', RANGES);
  choices($('stats-bots'), 'bots', BOTS);
  $('stats-controls').addEventListener('change', (event) => {
    const input = event.target;
    if (!state.view || input.type !== 'radio') return;
    if (input.name === 'bots') return choose({ ...state.view, bots: input.value });
    if (input.value !== 'custom') return choose({ code: state.view.code, bots: state.view.bots, range: input.value });
    // Custom starts from the days shown, ready to change.
    const shown = state.stats ? shownSeries(state.stats) : [];
    const first = shown[0]?.start ?? state.stats?.from ?? Date.now() / 1000 - 6 * DAY;
    const last = (state.stats?.to ?? Date.now() / 1000) - 1;
    choose({ ...state.view, range: 'custom', from: isoDate(new Date(Math.max(0, first) * 1000)), to: isoDate(new Date(last * 1000)) });
  });
  $('stats-controls').addEventListener('submit', (event) => {
    event.preventDefault();
    const from = $('stats-from').value;
    const to = $('stats-to').value;
    if (!from || !to) return showError($('stats-custom-error'), 'Choose both dates.');
    if (from > to) return showError($('stats-custom-error'), 'The first date must not be after the last.');
    void pending($('stats-apply'), async () => choose({ ...state.view, range: 'custom', from, to }));
  });
  $('stats-key-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const key = $('stats-key').value;
    if (!key) return showError($('stats-key-error'), 'Enter the admin API key.');
    sessionStorage.setItem(API_KEY_KEY, key);
    $('api-key').value = key;
    void pending($('stats-key-button'), () => show(state.view));
  });
  $('visits-prev').addEventListener('click', () => pageVisits($('visits-prev'), -VISITS_PAGE));
  $('visits-next').addEventListener('click', () => pageVisits($('visits-next'), VISITS_PAGE));
  $('stats-csv').addEventListener('click', () => download($('stats-csv'), 'csv'));
  $('stats-jsonl').addEventListener('click', () => download($('stats-jsonl'), 'jsonl'));
  // The Stats link of a row is where the focus returns.
  document.addEventListener('click', (event) => {
    const opener = event.target.closest?.('a[data-stats]');
    if (opener) state.opener = opener;
  });
  new ResizeObserver(() => drawChart()).observe($('stats-chart'));
  window.addEventListener('hashchange', () => void route());
  void route();
}

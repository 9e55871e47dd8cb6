// The stats view's address (docs/ui.md, stats): the fragment that names it
// (`#stats/<code>?range=7d&bots=exclude`, `#stats/<code>?domain=go.example&…` for a link of
// another domain than the default one, `#stats` for every link), read and written, and the range
// it names turned into the API's parameters. Pure functions of their arguments: no DOM.

/** The range picker: name in the fragment, label. */
export const RANGES = [
  ['24h', '24 h'],
  ['7d', '7 d'],
  ['30d', '30 d'],
  ['90d', '90 d'],
  ['1y', '1 y'],
  ['all', 'All'],
  ['custom', 'Custom'],
];
const DEFAULT_RANGE = '30d';

/** The bots choice: name in the fragment, label. */
export const BOTS = [
  ['exclude', 'Exclude'],
  ['include', 'Include'],
  ['only', 'Only bots'],
];

/** A domain's host as a fragment may name it (lower case, with an optional port). */
const HOST = /^[a-z0-9.-]+(:\d{1,5})?$/;

/** The view a fragment names: `{ code (null: every link), domain (null: the default), range, bots, from?, to? }`, or null (home). */
export function parseFragment(hash) {
  const m = /^#stats(?:\/([A-Za-z0-9_-]+))?(?:\?(.*))?$/.exec(hash);
  if (!m) return null;
  const q = new URLSearchParams(m[2] ?? '');
  const range = RANGES.some(([name]) => name === q.get('range')) ? q.get('range') : DEFAULT_RANGE;
  const bots = BOTS.some(([name]) => name === q.get('bots')) ? q.get('bots') : 'exclude';
  const domain = m[1] && HOST.test(q.get('domain') ?? '') ? q.get('domain') : null;
  const view = { code: m[1] ?? null, domain, range, bots };
  const date = /^\d{4}-\d{2}-\d{2}$/;
  if (range === 'custom') {
    if (!date.test(q.get('from') ?? '') || !date.test(q.get('to') ?? '')) return { ...view, range: DEFAULT_RANGE };
    Object.assign(view, { from: q.get('from'), to: q.get('to') });
  }
  return view;
}

export function fragmentOf(view) {
  const q = new URLSearchParams(view.code && view.domain ? { domain: view.domain } : {});
  q.set('range', view.range);
  q.set('bots', view.bots);
  if (view.range === 'custom') {
    q.set('from', view.from);
    q.set('to', view.to);
  }
  return `#stats${view.code ? `/${view.code}` : ''}?${q}`;
}

/** `YYYY-MM-DD` of a local date. */
export function isoDate(d) {
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
export function rangeParams(view, now) {
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

// The stats of a link, and of every link (docs/ui.md, stats): a view of the page with its own
// fragment (`stats-fragment.js`), so the back button and a reload work. This module routes between
// the home view and the stats, loads the figures (`/api/urls/<code>/stats` on the link's domain,
// `/api/stats`) and wires
// the controls; the figures are drawn by `stats-figures.js`, the latest visits by `stats-visits.js`.
// Every range is asked in the browser's time zone (`tz`).

import { API_KEY_KEY, api, linkPath, problem } from './api.js';
import { $, el, pending, showError } from './dom.js';
import { linkName } from './records.js';
import { clearChart, drawChart, shownSeries } from './stats-chart.js';
import { gone, render } from './stats-figures.js';
import { BOTS, RANGES, fragmentOf, isoDate, parseFragment, rangeParams } from './stats-fragment.js';
import { state } from './stats-state.js';
import { loadVisits, startVisits } from './stats-visits.js';

const DAY = 86_400;

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
  const fresh = state.view === null || state.view.code !== view.code || state.view.domain !== view.domain;
  if (fresh) {
    state.stats = null;
    state.titles.clear();
    clearChart();
    // The parts keep their place while the first figures load (the chart's box has its height).
    for (const id of ['stats-totals', 'stats-chart', 'stats-tops', 'stats-visit-rows']) $(id).replaceChildren();
    $('stats-range').textContent = 'Loading…';
    $('stats-notes').hidden = true;
    $('stats-latest').hidden = true;
    $('stats-body').hidden = true;
    $('stats-link').hidden = true;
    $('stats-title').textContent = view.code ? `Stats of ${linkName(view.code, view.domain)}` : 'Stats of all links';
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
  const { code, domain } = view;
  busy(true);
  try {
    const [res, record] = await Promise.all([
      api(code ? linkPath(code, domain, '/stats', params) : `api/stats?${params}`, { admin: true }),
      code ? api(linkPath(code, domain)) : undefined,
    ]);
    if (asked !== state.asked) return;
    // An empty 403 is a key not accepted; one with a detail, a key whose role may not read these stats.
    if (res.status === 403) return askKey((await problem(res)).message);
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
    if (stats.links) await loadTitles(stats.links);
    if (asked !== state.asked) return;
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

/** The titles of the dashboard's top links, which the stats name by code (and domain) only: each record read once while it stays open (unread: the name alone). */
async function loadTitles(links) {
  const unread = links.filter((link) => !state.titles.has(linkName(link.short_code, link.domain)));
  const read = async ({ short_code, domain }) => {
    const res = await api(linkPath(short_code, domain));
    if (res.ok) state.titles.set(linkName(short_code, domain), (await res.json()).title ?? null);
  };
  await Promise.all(unread.map((link) => read(link).catch(() => undefined)));
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

/** Wires the controls and shows the view the fragment names (a reload lands where it was). */
export function startStats() {
  choices($('stats-ranges'), 'range', RANGES);
  choices($('stats-bots'), 'bots', BOTS);
  $('stats-controls').addEventListener('change', (event) => {
    const input = event.target;
    if (!state.view || input.type !== 'radio') return;
    if (input.name === 'bots') return choose({ ...state.view, bots: input.value });
    if (input.value !== 'custom') return choose({ code: state.view.code, domain: state.view.domain, bots: state.view.bots, range: input.value });
    // Custom starts from the days shown, ready to change.
    const shown = state.stats ? shownSeries(state.view, state.stats) : [];
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
  startVisits();
  // The Stats link of a row is where the focus returns.
  document.addEventListener('click', (event) => {
    const opener = event.target.closest?.('a[data-stats]');
    if (opener) state.opener = opener;
  });
  new ResizeObserver(() => drawChart()).observe($('stats-chart'));
  window.addEventListener('hashchange', () => void route());
  void route();
}

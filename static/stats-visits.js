// The latest visits of a link, page by page, and the download of every visit of the range
// (docs/ui.md, stats): both ask the range of the figures shown, as the stats answered it.

import { api, linkPath, problem } from './api.js';
import { $, el, pending, saveDownload, showError } from './dom.js';
import { gone } from './stats-figures.js';
import { countryName, dateFormat, deviceName } from './stats-names.js';
import { state } from './stats-state.js';

const VISITS_PAGE = 20;

/** The range of the figures shown, for the visits routes (which neither round nor default it). */
function shownRange() {
  const { from, to } = state.stats;
  return { from: String(Math.max(0, from)), to: String(to), bots: state.view.bots };
}

export async function loadVisits(view) {
  const query = new URLSearchParams({ ...shownRange(), limit: String(VISITS_PAGE), offset: String(state.visitsOffset) });
  const res = await api(linkPath(view.code, view.domain, '/visits', query), { admin: true });
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
      if (state.view.code) {
        query.set('code', state.view.code);
        // A link of another domain than the default one: its code on that domain.
        if (state.view.domain) query.set('domain', state.view.domain);
      }
      const res = await api(`api/visits/export?${query}`, { admin: true });
      if (!res.ok) throw new Error((await problem(res)).message);
      await saveDownload(res, `visits.${format}`);
    } catch (err) {
      showError($('stats-download-error'), err.message);
    }
  });
}

/** The pager of the latest visits and the two downloads. */
export function startVisits() {
  $('visits-prev').addEventListener('click', () => pageVisits($('visits-prev'), -VISITS_PAGE));
  $('visits-next').addEventListener('click', () => pageVisits($('visits-next'), VISITS_PAGE));
  $('stats-csv').addEventListener('click', () => download($('stats-csv'), 'csv'));
  $('stats-jsonl').addEventListener('click', () => download($('stats-jsonl'), 'jsonl'));
}

// The figures of the stats view (docs/ui.md, stats): the range shown, the totals with their notes,
// the chart (`stats-chart.js`) and the top lists; or, when they cannot be shown, why.

import { shareBar, toNodes } from './charts.js';
import { $, el, showError } from './dom.js';
import { renderChart } from './stats-chart.js';
import { linkName } from './records.js';
import { fragmentOf } from './stats-fragment.js';
import { BUCKET_NAMES, countryName, dateFormat, deviceName, plural } from './stats-names.js';
import { state } from './stats-state.js';

/** The top lists: the stats field, the heading, the column's name, how a value reads (`null` included). */
const TOPS = [
  ['referrers', 'Referrers', 'Referrer', (v) => v ?? 'Direct'],
  ['countries', 'Countries', 'Country', (v) => countryName(v)],
  ['browsers', 'Browsers', 'Browser', (v) => v ?? 'Unknown'],
  ['os', 'Operating systems', 'OS', (v) => v ?? 'Unknown'],
  ['devices', 'Devices', 'Device', (v) => deviceName(v)],
];

/** The figures cannot be shown: say why in words (the figures of before would be read as the range's). */
export function gone(message) {
  $('stats-body').hidden = true;
  showError($('stats-error'), message);
}

export function render(view, stats) {
  $('stats-body').hidden = false;
  const names = BUCKET_NAMES[stats.interval];
  const span = dateFormat(stats.tz, { dateStyle: 'medium', timeStyle: 'short' });
  $('stats-range').textContent =
    view.range === 'all'
      ? `All visits up to ${span.format(stats.to * 1000)}, per ${names.unit} (${stats.tz}).`
      : `${span.formatRange(stats.from * 1000, stats.to * 1000)}, per ${names.unit} (${stats.tz}).`;
  renderTotals(view, stats);
  renderChart(view, stats);
  renderTops(view, stats);
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
  // The dashboard only: requests no link answered, counted apart (docs/analytics.md, orphan visits).
  if (!view.code && stats.orphan_visits > 0)
    notes.push(
      `${plural(stats.orphan_visits, 'orphan visit')} in this range: requests no link answered (unknown codes, expired links, a domain's home page), not in these figures.`,
    );
  $('stats-notes').replaceChildren(...notes.map((text) => el('span', { textContent: text })));
  $('stats-notes').hidden = notes.length === 0;
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

function renderTops(view, stats) {
  const tables = [];
  if (stats.links) {
    const links = { top: stats.links.map((l) => ({ value: l, visits: l.visits })), others: 0 };
    // The code (after its domain, when not the default one) is what names a link; its title, when it has one, follows (cut to the room, whole in `title`).
    const linkOf = ({ short_code: code, domain }) => {
      const name = linkName(code, domain);
      const link = el('a', { href: fragmentOf({ ...view, code, domain }), 'aria-label': `Stats of ${name}`, textContent: name });
      const title = state.titles.get(name);
      return title ? el('span', { className: 'titled' }, link, el('span', { className: 'top-title', title, textContent: title })) : link;
    };
    tables.push(topTable('Top links', 'Link', links, String, stats.visits, linkOf));
  }
  for (const [field, caption, column, name] of TOPS) tables.push(topTable(caption, column, stats[field], name, stats.visits));
  $('stats-tops').replaceChildren(...tables);
}

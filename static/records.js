// A link's record as the page shows it: its dates in the browser's time zone, its visits against
// its limit, and the whole record as a list of terms.

import { el, link } from './dom.js';

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

export function formatDate(seconds) {
  return dateFormat.format(new Date(seconds * 1000));
}

export function expiry(record) {
  return record.expires_at == null ? 'Never' : formatDate(record.expires_at);
}

export function visits(record) {
  return record.max_visits == null ? String(record.visit_count) : `${record.visit_count} of ${record.max_visits}`;
}

/** Fills a <dl> with the fields of a record (title and tags only when it has them). */
export function showRecord(dl, record) {
  const rows = [
    ...(record.title ? [['Title', record.title]] : []),
    ['Short link', link(record.short_url)],
    ['Original URL', link(record.original_url)],
    ...(record.tags?.length ? [['Tags', record.tags.join(', ')]] : []),
    ['Created', formatDate(record.created_at)],
    ['Expires', expiry(record)],
    ['Visits', visits(record)],
  ];
  dl.replaceChildren(...rows.flatMap(([term, value]) => [el('dt', { textContent: term }), el('dd', {}, value)]));
  dl.hidden = false;
}

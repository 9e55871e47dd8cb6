// A link's record as the page shows it: its dates in the browser's time zone, its visits against
// its limit, its name and the address of its stats, and the whole record as a list of terms; and
// the instance's domains, which the page names in a `<meta name="domains">` when it has several.

import { el, link } from './dom.js';

/** Every domain's host, the default one first; empty with one domain (the page names none then). */
export const HOSTS = document.querySelector('meta[name="domains"]')?.content.split(' ').filter(Boolean) ?? [];

/** How the page names a link: its code, after its domain's host when that is not the default one (`go.example/4kZt9q`). */
export const linkName = (code, domain) => (domain ? `${domain}/${code}` : code);

/** The address of a link's stats in the page (`#stats/4kZt9q`, `#stats/4kZt9q?domain=go.example`). */
export const statsHref = (code, domain) => `#stats/${code}${domain ? `?domain=${encodeURIComponent(domain)}` : ''}`;

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

/** What a link does beyond its target, in words for its row: its rules, a password, its validity. */
export function routingMarks(record) {
  const rules = record.rules?.length ?? 0;
  const since = record.valid_since == null ? '' : formatDate(record.valid_since);
  const until = record.valid_until == null ? '' : formatDate(record.valid_until);
  return [
    ...(rules ? [rules === 1 ? '1 rule' : `${rules} rules`] : []),
    ...(record.password_protected ? ['Password'] : []),
    ...(since || until ? [since && until ? `Valid ${since} – ${until}` : since ? `Valid from ${since}` : `Valid until ${until}`] : []),
  ];
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

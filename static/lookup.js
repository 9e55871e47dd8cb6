// "Look up a link" (docs/ui.md): by short code, by short link pasted whole (on any of the
// instance's domains), or by original URL; the record found, and a link to its stats.

import { api, linkPath, problem } from './api.js';
import { $, pending, showError } from './dom.js';
import { HOSTS, linkName, showRecord, statsHref } from './records.js';

/**
 * The link a short link of this service names, `{ code, domain }` (null: the default domain), or
 * undefined when `input` is none: its path is one segment under the page's, on the page's origin
 * or on one of the instance's domains.
 */
function ownShortLink(input) {
  try {
    const url = new URL(input);
    const base = new URL('.', document.baseURI);
    const code = url.pathname.slice(base.pathname.length);
    if (!url.pathname.startsWith(base.pathname) || code === '' || code.includes('/')) return undefined;
    if (url.origin === base.origin || url.host === HOSTS[0]) return { code, domain: null };
    return HOSTS.includes(url.host) ? { code, domain: url.host } : undefined;
  } catch {
    return undefined;
  }
}

/** A code typed alone: on the default domain, else on the first other domain that has it. */
async function byCode(code) {
  const domains = [null, ...HOSTS.slice(1)];
  let res;
  for (const domain of domains) {
    res = await api(linkPath(code, domain));
    if (res.status !== 404) return res;
  }
  return res;
}

function lookUp(event) {
  event.preventDefault();
  const error = $('lookup-error');
  const dl = $('lookup-record');
  const input = $('lookup').value.trim();
  dl.hidden = true;
  $('lookup-stats').hidden = true;
  if (!input) return showError(error, 'Enter a short code or a URL.');
  showError(error, '');
  // Anything with a scheme is an original URL unless it is one of this service's short links;
  // anything else a code, or a short link pasted without its scheme.
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(input);
  const own = ownShortLink(scheme ? input : `${location.protocol}//${input}`);
  const byUrl = scheme && !own;
  void pending($('lookup-button'), async () => {
    try {
      const res = byUrl
        ? await api(`api/lookup?url=${encodeURIComponent(input)}`)
        : own
          ? await api(linkPath(own.code, own.domain))
          : await byCode(input.slice(input.lastIndexOf('/') + 1));
      if (res.status === 404) throw new Error(byUrl ? 'No link points to that URL.' : 'There is no link with that code.');
      if (!res.ok) throw new Error((await problem(res)).message);
      const record = await res.json();
      showRecord(dl, record);
      const stats = $('lookup-stats-link');
      const name = linkName(record.short_code, record.domain);
      stats.href = statsHref(record.short_code, record.domain);
      stats.dataset.stats = name;
      stats.textContent = `Stats of ${name}`;
      $('lookup-stats').hidden = false;
    } catch (err) {
      showError(error, err.message);
    }
  });
}

export function startLookup() {
  $('lookup-form').addEventListener('submit', lookUp);
}

// "Look up a link" (docs/ui.md): by short code, by short link pasted whole, or by original URL;
// the record found, and a link to its stats.

import { api, problem } from './api.js';
import { $, pending, showError } from './dom.js';
import { showRecord } from './records.js';

/** Whether `input` is a short link of this service (its path is one segment under the page's). */
function isOwnShortLink(input) {
  try {
    const url = new URL(input);
    const base = new URL('.', document.baseURI);
    return url.origin === base.origin && url.pathname.startsWith(base.pathname) && !url.pathname.slice(base.pathname.length).includes('/');
  } catch {
    return false;
  }
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
  // Anything with a scheme is an original URL; anything else a code (a pasted short link works too).
  const byUrl = /^[a-z][a-z0-9+.-]*:\/\//i.test(input) && !isOwnShortLink(input);
  const code = byUrl ? '' : input.slice(input.lastIndexOf('/') + 1);
  void pending($('lookup-button'), async () => {
    try {
      const res = byUrl ? await api(`api/lookup?url=${encodeURIComponent(input)}`) : await api(`api/urls/${encodeURIComponent(code)}`);
      if (res.status === 404) throw new Error(byUrl ? 'No link points to that URL.' : 'There is no link with that code.');
      if (!res.ok) throw new Error((await problem(res)).message);
      const record = await res.json();
      showRecord(dl, record);
      const stats = $('lookup-stats-link');
      stats.href = `#stats/${record.short_code}`;
      stats.dataset.stats = record.short_code;
      stats.textContent = `Stats of ${record.short_code}`;
      $('lookup-stats').hidden = false;
    } catch (err) {
      showError(error, err.message);
    }
  });
}

export function startLookup() {
  $('lookup-form').addEventListener('submit', lookUp);
}

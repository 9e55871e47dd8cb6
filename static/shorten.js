// "Shorten a link" (docs/ui.md): the form with its domain picker (with several domains) and its
// options (the code lengths the instance takes, emptied after each link unless kept), each reason
// of the API beside the field it is about, and the result: the short link to copy, its record and
// its QR code.

import { api, linkPath, problem } from './api.js';
import { $, copy, el, pending, showError } from './dom.js';
import { probeLinks } from './gate.js';
import { formReason, numberField, tagList, withScheme } from './input.js';
import { showQr } from './qr.js';
import { HOSTS, showRecord } from './records.js';

/** Where each input's reason is shown, by the input the API names. */
const SHORTEN_ERRORS = {
  url: 'url-error',
  code: 'code-error',
  retention_days: 'retention-error',
  max_visits: 'max-visits-error',
  title: 'title-error',
  tags: 'tags-error',
  domain: 'domain-error',
};

/** The options a new link does not inherit unless "Keep these options" is ticked. */
const KEPT_OPTIONS = ['retention', 'max-visits', 'title', 'tags'];

/** The body of `POST /api/shorten` from the form: the options left empty are not sent. */
function shortenBody(url) {
  const body = { url };
  // The default domain (the picker's first host, its value empty) is the one a create without `domain` makes.
  const domain = $('domain').value;
  if (domain) body.domain = domain;
  const code = $('code').value.trim();
  if (code) body.code = code;
  const retention = numberField($('retention'));
  if (retention !== undefined) body.retention_days = retention;
  const maxVisits = numberField($('max-visits'));
  if (maxVisits !== undefined) body.max_visits = maxVisits;
  const title = $('title').value.trim();
  if (title) body.title = title;
  const tags = tagList($('tags').value);
  if (tags.length > 0) body.tags = tags;
  return body;
}

function shorten(event) {
  event.preventDefault();
  for (const id of Object.values(SHORTEN_ERRORS)) showError($(id), '');
  // A new attempt replaces the old result, so an error is never read as being about it.
  $('shorten-result').hidden = true;
  const typed = $('url').value.trim();
  if (!typed) return showError($('url-error'), 'Enter the URL to shorten.');
  const url = withScheme(typed);
  $('url').value = url;
  const body = shortenBody(url);
  void pending($('shorten-button'), async () => {
    try {
      const res = await api('api/shorten', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      if (res.status !== 201) {
        const { field, message } = await problem(res);
        const target = $(SHORTEN_ERRORS[field] ?? 'url-error');
        if (field && field !== 'url' && field !== 'domain') $('options').open = true;
        showError(target, formReason(field, message));
        return;
      }
      const shortUrl = (await res.text()).trim();
      emptyOptions();
      await showResult(shortUrl, body.domain);
    } catch (err) {
      showError($('url-error'), err.message);
    }
  });
}

/**
 * After a link is made, so the next one does not silently get its title, tags, expiry or limit.
 * A custom code is emptied even when the options are kept: a code makes one link.
 */
function emptyOptions() {
  $('code').value = '';
  if ($('keep-options').checked) return;
  for (const id of KEPT_OPTIONS) $(id).value = '';
}

/**
 * The code lengths this instance takes (MIN_SHORT_LENGTH..MAX_SHORT_LENGTH), said under the code
 * field. Its OpenAPI document gives them (the custom code of `ShortenInput`); asked once, when the
 * options are first opened. Without them the hint keeps its general words.
 */
async function showCodeLengths() {
  try {
    const res = await api('openapi.json');
    if (!res.ok) return;
    const code = (await res.json()).components?.schemas?.ShortenInput?.properties?.code;
    const lengths = code?.anyOf?.find((schema) => Number.isInteger(schema.minLength) && Number.isInteger(schema.maxLength));
    if (lengths) $('code-help').textContent = `${lengths.minLength} to ${lengths.maxLength} characters: letters, digits, - and _.`;
  } catch {
    // unreachable or not JSON: the general hint stays
  }
}

async function showResult(shortUrl, domain) {
  const a = $('short-link');
  a.href = shortUrl;
  a.textContent = shortUrl;
  $('copy-status').textContent = '';
  $('shorten-qr').replaceChildren();
  $('shorten-record').replaceChildren();
  const code = shortUrl.slice(shortUrl.lastIndexOf('/') + 1);
  const meta = await api(linkPath(code, domain));
  const record = meta.ok ? await meta.json() : undefined;
  if (record) showRecord($('shorten-record'), record);
  $('private-note').hidden = (await probeLinks(shortUrl)) !== true;
  $('shorten-result').hidden = false;
  $('copy-button').focus();
  if (record) {
    try {
      await showQr(record, $('shorten-qr'));
    } catch (err) {
      $('shorten-qr').replaceChildren(el('p', { className: 'error', textContent: err.message }));
    }
  }
}

/** The domain picker, when the instance has several: its hosts, the default one first and chosen. */
function showDomains() {
  if (HOSTS.length < 2) return;
  $('domain').replaceChildren(...HOSTS.map((host, i) => el('option', { value: i === 0 ? '' : host, textContent: host })));
  $('domain-field').hidden = false;
}

export function startShorten() {
  showDomains();
  $('shorten-form').addEventListener('submit', shorten);
  let lengthsAsked = false;
  $('options').addEventListener('toggle', () => {
    if (!$('options').open || lengthsAsked) return;
    lengthsAsked = true;
    void showCodeLengths();
  });
  $('copy-button').addEventListener('click', async () => {
    const ok = await copy($('short-link').textContent);
    $('copy-status').textContent = ok ? 'Copied' : 'Copy failed: select the link and copy it by hand.';
  });
}

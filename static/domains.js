// The domains (docs/ui.md, domains): a view of the page at `#domains`, for admin keys. Each short
// domain of the instance, the default one first and marked, with its live links and a form of its
// own three redirects (its home page, an unknown code, an expired link), each saved with
// `PATCH /api/domains/<host>`. The key the page sends is the one of "Your links" (sessionStorage).

import { API_KEY_KEY, adminKey, problem } from './api.js';
import { $, el, pending, showError } from './dom.js';
import { withScheme } from './input.js';
import { HOSTS } from './records.js';

/** The redirects: the API's field, the label, the hint (the default domain's home page has its own). */
const REDIRECTS = [
  ['base_url', 'Home page', 'Where its address without a code (/) goes.'],
  ['not_found', 'Unknown code', 'Instead of the “Link not found” page.'],
  ['expired', 'Expired link', 'Instead of the page saying a link expired or reached its visit limit.'],
];
const DEFAULT_HOME = 'Where its address without a code (/) goes once the UI is turned off (PRODUCTION); until then, this page.';

const isDomainsView = () => location.hash === '#domains';

/** The form asking for an admin key (shown when none is kept, it was refused, or its role may not manage domains), and requests with it. */
const { askKey, withKey } = adminKey('domains');

async function loadDomains() {
  showError($('domains-error'), '');
  if (!sessionStorage.getItem(API_KEY_KEY)) return askKey('');
  try {
    const res = await withKey('api/domains');
    if (!res) return;
    if (!res.ok) throw new Error((await problem(res)).message);
    const { domains } = await res.json();
    $('domains-key-form').hidden = true;
    $('domains-body').hidden = false;
    $('domains-summary').textContent =
      domains.length === 1 ? 'One domain: the default one, the host of BASE_URL.' : `${domains.length} domains, the default one first.`;
    $('domain-list').replaceChildren(...domains.map(domainForm));
  } catch (err) {
    showError($('domains-error'), err.message);
  }
}

const plural = (n, word) => `${n.toLocaleString()} ${word}${n === 1 ? '' : 's'}`;

/** What the list says of a domain under its host: default or not, and its live links. */
const about = (domain) => `${domain.is_default ? 'Default domain. ' : ''}${plural(domain.links, 'live link')}.`;

/** One domain: its host, whether it is the default, its links, and the form of its redirects. */
function domainForm(domain, index) {
  const prefix = `domain-${index}`;
  const inputs = {};
  const errors = {};
  const fields = REDIRECTS.map(([name, label, hint]) => {
    const id = `${prefix}-${name}`;
    const input = el('input', {
      id,
      type: 'url',
      inputmode: 'url',
      spellcheck: 'false',
      autocomplete: 'off',
      placeholder: 'none',
      'aria-describedby': `${id}-help ${id}-error`,
    });
    input.value = domain.redirects[name] ?? '';
    inputs[name] = input;
    errors[name] = el('p', { className: 'error', id: `${id}-error`, role: 'alert', hidden: true });
    const help = domain.is_default && name === 'base_url' ? DEFAULT_HOME : hint;
    return el(
      'div',
      { className: 'field' },
      el('label', { for: id, textContent: label }),
      input,
      el('p', { className: 'hint', id: `${id}-help`, textContent: help }),
      errors[name],
    );
  });
  const save = el('button', { type: 'submit', textContent: 'Save' });
  const status = el('span', { className: 'status', role: 'status' });
  const error = el('p', { className: 'error', role: 'alert', hidden: true });
  const info = el('p', { className: 'status', textContent: about(domain) });
  const form = el(
    'form',
    { className: 'domain-form', novalidate: '', 'aria-labelledby': `${prefix}-title`, 'data-domain': domain.domain },
    el('h3', { id: `${prefix}-title`, textContent: domain.domain }),
    info,
    el('div', { className: 'fields' }, ...fields),
    el('div', { className: 'row wrap saving' }, save, status),
    error,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    status.textContent = '';
    showError(error, '');
    for (const p of Object.values(errors)) showError(p, '');
    // Every field is sent: an empty one clears its redirect (null).
    const body = {};
    for (const [name, input] of Object.entries(inputs)) {
      const typed = input.value.trim();
      input.value = typed && withScheme(typed);
      body[name] = input.value || null;
    }
    void pending(save, async () => {
      try {
        const res = await withKey(`api/domains/${encodeURIComponent(domain.domain)}`, {
          method: 'PATCH',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        });
        if (!res) return;
        if (res.status === 404) throw new Error('This domain is no longer one of the service’s: reload the page.');
        if (!res.ok) return await refused(res, inputs, errors, error);
        const now = await res.json();
        for (const [name, input] of Object.entries(inputs)) input.value = now.redirects[name] ?? '';
        info.textContent = about(now);
        status.textContent = `Saved the redirects of ${now.domain}.`;
      } catch (err) {
        showError(error, err.message);
      }
    });
  });
  return form;
}

/**
 * A save refused: the reason beside the field it names, in the form's words ("Home page: must use
 * http or https, not ftp."), with the focus on that field; any other reason under the form.
 */
async function refused(res, inputs, errors, error) {
  const detail = await res
    .clone()
    .json()
    .then((body) => body.detail ?? '')
    .catch(() => '');
  const m = /^(base_url|not_found|expired)\b\s*(.*)$/s.exec(detail);
  if (!m) return showError(error, (await problem(res)).message);
  const [, name, reason] = m;
  const label = REDIRECTS.find(([field]) => field === name)[1];
  showError(errors[name], `${label}: ${reason}${/[.!?]$/.test(reason) ? '' : '.'}`);
  inputs[name].focus();
}

/**
 * Shows the domains at `#domains`, or leaves them. Runs after the stats' and the keys' routes (see
 * `app.js`), which hide their views and show the home view for every fragment not theirs.
 */
function route() {
  const on = isDomainsView();
  $('domains').hidden = !on;
  if (on) $('home').hidden = true;
  if (on) $('domains-link').setAttribute('aria-current', 'page');
  else $('domains-link').removeAttribute('aria-current');
  if (!on) return;
  $('domains-title').focus();
  void loadDomains();
}

export function startDomains() {
  // In the header with several domains; with one, the view still opens at its address.
  $('domains-link').hidden = HOSTS.length < 2;
  $('domains-key-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const key = $('domains-key').value;
    if (!key) return showError($('domains-key-error'), 'Enter an admin API key.');
    sessionStorage.setItem(API_KEY_KEY, key);
    // The same key serves your links, the stats and the keys.
    $('api-key').value = key;
    void pending($('domains-key-button'), () => loadDomains());
  });
  window.addEventListener('hashchange', route);
  route();
}

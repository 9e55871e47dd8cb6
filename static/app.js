// The web UI: plain DOM, no framework, no request leaves the origin. Every URL is relative, so the
// page works the same at `/` and under a base path (`/s/`). The gate token and the admin key live
// in sessionStorage: they last as long as the tab and are never written anywhere else.

const TOKEN_KEY = 'url-shortener.token';
const API_KEY_KEY = 'url-shortener.api-key';
const PAGE_SIZE = 20;

const $ = (id) => document.getElementById(id);

/** Raised after a 401: the token prompt is already showing, callers just stop. */
class Unauthorized extends Error {}

// ---- API access ----------------------------------------------------------------------------

async function api(path, { method = 'GET', headers = {}, body } = {}) {
  const all = { ...headers };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) all.Authorization = `Bearer ${token}`;
  let res;
  try {
    res = await fetch(path, { method, headers: all, body, cache: 'no-store' });
  } catch {
    throw new Error('The service could not be reached. Check your connection and try again.');
  }
  if (res.status === 401) {
    sessionStorage.removeItem(TOKEN_KEY);
    showGate(token ? 'That token was not accepted. Enter it again.' : 'This service needs an access token.');
    throw new Unauthorized();
  }
  return res;
}

/** The API's `detail`, turned into a sentence for a person. */
async function problem(res) {
  let detail = '';
  try {
    detail = (await res.json()).detail ?? '';
  } catch {
    // an empty or non-JSON body: fall back to the status below
  }
  if (!detail) {
    if (res.status === 404) return 'Nothing found.';
    if (res.status === 403) return 'That API key was not accepted.';
    if (res.status === 503) return 'The service cannot store links right now. Try again in a moment.';
    return `The request failed (${res.status}).`;
  }
  const text = detail
    .replace(/^url\b/, 'The URL')
    .replace(/^retention_days\b/, 'The number of days')
    .replace(/^limit\b/, 'The page size')
    .replace(/^offset\b/, 'The page');
  const sentence = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?]$/.test(sentence) ? sentence : `${sentence}.`;
}

function showError(el, message) {
  el.textContent = message;
  el.hidden = !message;
}

// ---- Records -------------------------------------------------------------------------------

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

function formatDate(seconds) {
  return dateFormat.format(new Date(seconds * 1000));
}

function expiry(record) {
  if (!record.retention_days) return 'Never';
  return formatDate(record.created_at + record.retention_days * 86400);
}

/** Fills a <dl> with the fields of a record. */
function showRecord(dl, record, { visits = true } = {}) {
  const rows = [
    ['Short link', link(record.short_url)],
    ['Original URL', link(record.original_url)],
    ['Created', formatDate(record.created_at)],
    ['Expires', expiry(record)],
  ];
  if (visits) rows.push(['Visits', String(record.visit_count)]);
  dl.replaceChildren(
    ...rows.flatMap(([term, value]) => {
      const dt = document.createElement('dt');
      dt.textContent = term;
      const dd = document.createElement('dd');
      dd.append(value);
      return [dt, dd];
    }),
  );
  dl.hidden = false;
}

function link(href, text = href) {
  const a = document.createElement('a');
  a.href = href;
  a.textContent = text;
  a.rel = 'noreferrer';
  return a;
}

// ---- The gate ------------------------------------------------------------------------------

function showGate(message) {
  $('gate').hidden = false;
  $('app').hidden = true;
  $('forget-token').hidden = true;
  showError($('gate-error'), message ?? '');
  $('token').value = '';
  $('token').focus();
}

function hideGate() {
  $('gate').hidden = true;
  $('app').hidden = false;
  $('forget-token').hidden = !sessionStorage.getItem(TOKEN_KEY);
}

async function checkGate() {
  let required = false;
  try {
    const res = await fetch('auth-check', { cache: 'no-store' });
    if (res.ok) required = (await res.json()).auth_required === true;
  } catch {
    // unreachable: the forms say so when used
  }
  // A link cannot carry the token: behind the gate the reference is for API clients only.
  $('docs-link').hidden = required;
  if (required && !sessionStorage.getItem(TOKEN_KEY)) showGate();
  else hideGate();
}

$('gate-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const token = $('token').value;
  if (!token) return showError($('gate-error'), 'Enter the token.');
  sessionStorage.setItem(TOKEN_KEY, token);
  try {
    // Any protected endpoint tells whether the token is right.
    const res = await api('api/health');
    if (!res.ok) throw new Error(await problem(res));
    hideGate();
    $('url').focus();
  } catch (err) {
    if (!(err instanceof Unauthorized)) showError($('gate-error'), err.message);
  }
});

$('forget-token').addEventListener('click', () => {
  sessionStorage.removeItem(TOKEN_KEY);
  showGate('Token forgotten.');
});

// ---- Shorten -------------------------------------------------------------------------------

$('shorten-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const error = $('url-error');
  const retentionError = $('retention-error');
  const url = $('url').value.trim();
  const retention = $('retention').value.trim();
  showError(retentionError, '');
  if (!url) return showError(error, 'Enter the URL to shorten.');
  showError(error, '');
  const button = $('shorten-button');
  button.disabled = true;
  try {
    const body = { url };
    if (retention !== '') body.retention_days = Number(retention);
    const res = await api('api/shorten', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status !== 201) {
      const message = await problem(res);
      // Each message goes next to the field it is about.
      if (message.startsWith('The number of days')) return showError(retentionError, message);
      throw new Error(message);
    }
    const shortUrl = (await res.text()).trim();
    const a = $('short-link');
    a.href = shortUrl;
    a.textContent = shortUrl;
    $('copy-status').textContent = '';
    const code = shortUrl.slice(shortUrl.lastIndexOf('/') + 1);
    const meta = await api(`api/urls/${encodeURIComponent(code)}`);
    if (meta.ok) showRecord($('shorten-record'), await meta.json(), { visits: false });
    else $('shorten-record').replaceChildren();
    $('shorten-result').hidden = false;
    $('copy-button').focus();
  } catch (err) {
    if (!(err instanceof Unauthorized)) showError(error, err.message);
  } finally {
    button.disabled = false;
  }
});

$('copy-button').addEventListener('click', async () => {
  const status = $('copy-status');
  try {
    await navigator.clipboard.writeText($('short-link').textContent);
    status.textContent = 'Copied';
  } catch {
    status.textContent = 'Copy failed: select the link and copy it by hand.';
  }
});

// ---- Look up -------------------------------------------------------------------------------

$('lookup-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const error = $('lookup-error');
  const dl = $('lookup-record');
  const input = $('lookup').value.trim();
  dl.hidden = true;
  if (!input) return showError(error, 'Enter a short code or a URL.');
  showError(error, '');
  // Anything with a scheme is an original URL; anything else a code (a pasted short link works too).
  const byUrl = /^[a-z][a-z0-9+.-]*:\/\//i.test(input) && !isOwnShortLink(input);
  const code = byUrl ? '' : input.slice(input.lastIndexOf('/') + 1);
  try {
    const res = byUrl ? await api(`api/lookup?url=${encodeURIComponent(input)}`) : await api(`api/urls/${encodeURIComponent(code)}`);
    if (res.status === 404) throw new Error(byUrl ? 'No link points to that URL.' : 'There is no link with that code.');
    if (!res.ok) throw new Error(await problem(res));
    showRecord(dl, await res.json());
  } catch (err) {
    if (!(err instanceof Unauthorized)) showError(error, err.message);
  }
});

function isOwnShortLink(input) {
  try {
    const url = new URL(input);
    const base = new URL('.', document.baseURI);
    return url.origin === base.origin && url.pathname.startsWith(base.pathname) && !url.pathname.slice(base.pathname.length).includes('/');
  } catch {
    return false;
  }
}

// ---- Admin ---------------------------------------------------------------------------------

let offset = 0;

$('admin-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const key = $('api-key').value;
  if (!key) return showError($('admin-error'), 'Enter the admin API key.');
  sessionStorage.setItem(API_KEY_KEY, key);
  offset = 0;
  void loadList();
});

$('prev-page').addEventListener('click', () => {
  offset = Math.max(0, offset - PAGE_SIZE);
  void loadList();
});

$('next-page').addEventListener('click', () => {
  offset += PAGE_SIZE;
  void loadList();
});

async function loadList() {
  const error = $('admin-error');
  showError(error, '');
  const key = sessionStorage.getItem(API_KEY_KEY) ?? '';
  try {
    const res = await api(`api/urls?limit=${PAGE_SIZE}&offset=${offset}`, { headers: { 'X-API-Key': key } });
    if (res.status === 403) {
      $('admin-list').hidden = true;
      throw new Error('That API key was not accepted. Check it and try again.');
    }
    if (!res.ok) throw new Error(await problem(res));
    const total = Number(res.headers.get('X-Total-Count') ?? 0);
    const { urls } = await res.json();
    if (urls.length === 0 && offset > 0) {
      // The last page emptied (deleted elsewhere): step back.
      offset = Math.max(0, offset - PAGE_SIZE);
      return loadList();
    }
    renderList(urls, total);
  } catch (err) {
    if (!(err instanceof Unauthorized)) showError(error, err.message);
  }
}

function renderList(urls, total) {
  $('admin-list').hidden = false;
  $('admin-summary').textContent =
    total === 0 ? 'No links yet.' : `Links ${offset + 1}–${offset + urls.length} of ${total}, newest first.`;
  $('admin-rows').replaceChildren(...urls.map(row));
  $('prev-page').disabled = offset === 0;
  $('next-page').disabled = offset + urls.length >= total;
}

function row(record) {
  const tr = document.createElement('tr');
  const cells = [
    link(record.short_url, record.short_code),
    link(record.original_url),
    String(record.visit_count),
    formatDate(record.created_at),
    expiry(record),
  ];
  for (const [i, value] of cells.entries()) {
    const td = document.createElement('td');
    if (i === 1) td.className = 'url';
    if (i === 2) td.className = 'num';
    td.append(value);
    tr.append(td);
  }
  const actions = document.createElement('td');
  actions.className = 'actions';
  actions.append(deleteButton(record, actions));
  tr.append(actions);
  return tr;
}

/** Delete asks first, in place: "Delete?" then Yes / Cancel, all reachable by keyboard. */
function deleteButton(record, cell) {
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'danger';
  button.textContent = 'Delete';
  button.setAttribute('aria-label', `Delete ${record.short_code}`);
  button.addEventListener('click', () => {
    const ask = document.createElement('span');
    ask.className = 'confirm';
    ask.textContent = `Delete ${record.short_code}? `;
    const yes = document.createElement('button');
    yes.type = 'button';
    yes.className = 'danger';
    yes.textContent = 'Yes, delete';
    const no = document.createElement('button');
    no.type = 'button';
    no.className = 'secondary';
    no.textContent = 'Cancel';
    no.addEventListener('click', () => {
      cell.replaceChildren(button);
      button.focus();
    });
    yes.addEventListener('click', () => void remove(record));
    ask.append(yes, ' ', no);
    cell.replaceChildren(ask);
    no.focus();
  });
  return button;
}

async function remove(record) {
  const error = $('admin-error');
  const key = sessionStorage.getItem(API_KEY_KEY) ?? '';
  try {
    const res = await api(`api/urls/${encodeURIComponent(record.short_code)}`, { method: 'DELETE', headers: { 'X-API-Key': key } });
    if (res.status === 403) throw new Error('That API key was not accepted. Check it and try again.');
    if (res.status !== 204 && res.status !== 404) throw new Error(await problem(res));
    await loadList();
    $('admin-summary').textContent = `Deleted ${record.short_code}. ` + $('admin-summary').textContent;
  } catch (err) {
    if (!(err instanceof Unauthorized)) showError(error, err.message);
  }
}

// ---- Start ---------------------------------------------------------------------------------

$('api-key').value = sessionStorage.getItem(API_KEY_KEY) ?? '';
void checkGate();

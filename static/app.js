// The web UI (docs/ui.md): plain DOM, no framework, no request leaves the origin. The gate token
// and the admin key live in sessionStorage: they last as long as the tab and go nowhere else.

import { $, API_KEY_KEY, TOKEN_KEY, api, el, onTokenNeeded, parseSvg, pending, problem, saveDownload, showError, withScheme } from './api.js';
import { startStats } from './stats.js';

const PAGE_SIZE = 20;

/** Whether a token is required (`/auth-check`), and whether short links open without it. */
const gateState = { required: false, linksPrivate: undefined };

// ---- Records -------------------------------------------------------------------------------

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

function formatDate(seconds) {
  return dateFormat.format(new Date(seconds * 1000));
}

function expiry(record) {
  return record.expires_at == null ? 'Never' : formatDate(record.expires_at);
}

function visits(record) {
  return record.max_visits == null ? String(record.visit_count) : `${record.visit_count} of ${record.max_visits}`;
}

function link(href, text = href) {
  const a = document.createElement('a');
  a.href = href;
  a.textContent = text;
  a.rel = 'noreferrer';
  return a;
}

/** Tags typed as text: separated by commas, trimmed, the empty ones dropped (the API sorts them). */
function tagList(text) {
  return text
    .split(',')
    .map((tag) => tag.trim())
    .filter((tag) => tag !== '');
}

/** Fills a <dl> with the fields of a record (title and tags only when it has them). */
function showRecord(dl, record) {
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

/** The QR code of `record`, fetched with the token and inserted as SVG nodes into `box`. */
async function showQr(record, box) {
  const res = await api(`api/urls/${encodeURIComponent(record.short_code)}/qr`);
  if (!res.ok) throw new Error((await problem(res)).message);
  box.replaceChildren(parseSvg(await res.text(), `QR code of ${record.short_url}`));
  box.hidden = false;
}

/**
 * Whether short links open without the token. Asked once, by a `HEAD` of a real short link sent
 * without it: `401` means private (gate on, public redirects off), anything else public. A `HEAD`
 * never counts a visit. A short link on another origin (a `BASE_URL` elsewhere) is not asked.
 */
async function probeLinks(shortUrl) {
  if (!gateState.required || gateState.linksPrivate !== undefined) return gateState.linksPrivate;
  if (new URL(shortUrl, document.baseURI).origin !== location.origin) return undefined;
  try {
    const res = await fetch(shortUrl, { method: 'HEAD', redirect: 'manual', cache: 'no-store' });
    gateState.linksPrivate = res.status === 401;
  } catch {
    // unknown: say nothing
  }
  return gateState.linksPrivate;
}

async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

// ---- The gate ------------------------------------------------------------------------------

let tokenWaiters = [];

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

onTokenNeeded(
  (message) =>
    new Promise((resolve) => {
      tokenWaiters.push(resolve);
      showGate(message);
    }),
);

async function checkGate() {
  try {
    const res = await fetch('auth-check', { cache: 'no-store' });
    if (res.ok) gateState.required = (await res.json()).auth_required === true;
  } catch {
    // unreachable: the forms say so when used
  }
  // A plain link cannot carry the token: behind the gate the reference is for API clients only.
  $('docs-link').hidden = gateState.required;
  if (gateState.required && !sessionStorage.getItem(TOKEN_KEY)) showGate();
  else hideGate();
}

$('gate-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const token = $('token').value;
  if (!token) return showError($('gate-error'), 'Enter the token.');
  void pending($('gate-button'), async () => {
    try {
      // Any protected endpoint tells whether the token is right; sent by hand, not through `api`,
      // which would open this very prompt again.
      const res = await fetch('api/health', { headers: { Authorization: `Bearer ${token}` }, cache: 'no-store' });
      if (res.status === 401) return showError($('gate-error'), 'That token was not accepted. Enter it again.');
      if (!res.ok) return showError($('gate-error'), (await problem(res)).message);
      sessionStorage.setItem(TOKEN_KEY, token);
      hideGate();
      const waiting = tokenWaiters;
      tokenWaiters = [];
      if (waiting.length === 0) $('url').focus();
      for (const resume of waiting) resume();
    } catch {
      showError($('gate-error'), 'The service could not be reached. Check your connection and try again.');
    }
  });
});

$('forget-token').addEventListener('click', () => {
  sessionStorage.removeItem(TOKEN_KEY);
  showGate('Token forgotten.');
});

// ---- Shorten -------------------------------------------------------------------------------

const SHORTEN_ERRORS = {
  url: 'url-error',
  code: 'code-error',
  retention_days: 'retention-error',
  max_visits: 'max-visits-error',
  title: 'title-error',
  tags: 'tags-error',
};

/** An optional number field: absent when empty, else the number typed (the API judges it). */
function numberField(input) {
  const text = input.value.trim();
  return text === '' ? undefined : Number(text);
}

$('shorten-form').addEventListener('submit', (event) => {
  event.preventDefault();
  for (const id of Object.values(SHORTEN_ERRORS)) showError($(id), '');
  // A new attempt replaces the old result, so an error is never read as being about it.
  $('shorten-result').hidden = true;
  const typed = $('url').value.trim();
  if (!typed) return showError($('url-error'), 'Enter the URL to shorten.');
  const url = withScheme(typed);
  $('url').value = url;
  const body = { url };
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
  void pending($('shorten-button'), async () => {
    try {
      const res = await api('api/shorten', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      if (res.status !== 201) {
        const { field, message } = await problem(res);
        const target = $(SHORTEN_ERRORS[field] ?? 'url-error');
        if (field && field !== 'url') $('options').open = true;
        showError(target, message);
        return;
      }
      await showResult((await res.text()).trim());
    } catch (err) {
      showError($('url-error'), err.message);
    }
  });
});

async function showResult(shortUrl) {
  const a = $('short-link');
  a.href = shortUrl;
  a.textContent = shortUrl;
  $('copy-status').textContent = '';
  $('shorten-qr').replaceChildren();
  $('shorten-record').replaceChildren();
  const code = shortUrl.slice(shortUrl.lastIndexOf('/') + 1);
  const meta = await api(`api/urls/${encodeURIComponent(code)}`);
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

$('copy-button').addEventListener('click', async () => {
  const ok = await copy($('short-link').textContent);
  $('copy-status').textContent = ok ? 'Copied' : 'Copy failed: select the link and copy it by hand.';
});

// ---- Look up -------------------------------------------------------------------------------

$('lookup-form').addEventListener('submit', (event) => {
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

// ---- Your links ----------------------------------------------------------------------------

const list = { offset: 0, q: '', tags: [], shown: { offset: 0, count: 0, total: 0 } };

$('admin-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const key = $('api-key').value;
  if (!key) return showError($('admin-error'), 'Enter the admin API key.');
  sessionStorage.setItem(API_KEY_KEY, key);
  list.offset = 0;
  void pending($('admin-button'), () => loadList());
});

$('search-form').addEventListener('submit', (event) => {
  event.preventDefault();
  list.q = $('search').value.trim();
  list.tags = tagList($('tag-filter').value);
  list.offset = 0;
  void pending($('search-button'), () => loadList());
});

/** A tag of a row, chosen: the list shows the links having it (the filter field says so). */
function filterByTag(tag) {
  $('tag-filter').value = tag;
  list.tags = [tag];
  list.offset = 0;
  void loadList().then(() => $('admin-summary').focus());
}

$('prev-page').addEventListener('click', () => {
  list.offset = Math.max(0, list.offset - PAGE_SIZE);
  void pending($('prev-page'), () => loadList()).then(updatePager);
});

$('next-page').addEventListener('click', () => {
  list.offset += PAGE_SIZE;
  void pending($('next-page'), () => loadList()).then(updatePager);
});

/** Newer/Older as the page shown allows (also once a pending pager button is given back). */
function updatePager() {
  $('prev-page').disabled = list.shown.offset === 0;
  $('next-page').disabled = list.shown.offset + list.shown.count >= list.shown.total;
}

/** Loads the current page; `note` (what just happened) leads the summary. */
async function loadList(note = '') {
  const error = $('admin-error');
  showError(error, '');
  showError($('search-error'), '');
  try {
    const query = new URLSearchParams({ limit: String(PAGE_SIZE), offset: String(list.offset) });
    if (list.q) query.set('q', list.q);
    for (const tag of list.tags) query.append('tag', tag);
    const res = await api(`api/urls?${query}`, { admin: true });
    if (res.status === 403) {
      $('admin-list').hidden = true;
      throw new Error('That API key was not accepted. Check it and try again.');
    }
    if (res.status === 400 && (list.q || list.tags.length > 0)) return showError($('search-error'), (await problem(res)).message);
    if (!res.ok) throw new Error((await problem(res)).message);
    const total = Number(res.headers.get('X-Total-Count') ?? 0);
    const { urls } = await res.json();
    if (urls.length === 0 && list.offset > 0) {
      // The last page emptied (deleted elsewhere): step back.
      list.offset = Math.max(0, list.offset - PAGE_SIZE);
      return loadList(note);
    }
    renderList(urls, total, note);
    if (urls[0]) $('list-note').hidden = (await probeLinks(urls[0].short_url)) !== true;
  } catch (err) {
    showError(error, err.message);
  }
}

/** “a” and “b”. */
const quoted = (tags) => tags.map((tag) => `“${tag}”`).join(' and ');

function renderList(urls, total, note) {
  $('admin-list').hidden = false;
  const { q, tags } = list;
  const matching = (q ? ` matching “${q}”` : '') + (tags.length > 0 ? ` tagged ${quoted(tags)}` : '');
  const summary =
    total === 0
      ? q && tags.length > 0
        ? `No links match “${q}” and are tagged ${quoted(tags)}.`
        : q
          ? `No links match “${q}”.`
          : tags.length > 0
            ? `No links are tagged ${quoted(tags)}.`
            : 'No links yet.'
      : `Links ${list.offset + 1}–${list.offset + urls.length} of ${total}${matching}, newest first.`;
  $('admin-summary').textContent = note ? `${note} ${summary}` : summary;
  $('admin-rows').replaceChildren(...urls.map(row));
  list.shown = { offset: list.offset, count: urls.length, total };
  updatePager();
}

const TARGET_CHARS = 48;

/** The target cell: the title above the (shortened) URL, the tags under it as chips that filter the list. */
function targetCell(record) {
  const target = link(
    record.original_url,
    record.original_url.length > TARGET_CHARS ? `${record.original_url.slice(0, TARGET_CHARS - 1)}…` : record.original_url,
  );
  target.title = record.original_url;
  const box = el('div', { className: 'target' });
  if (record.title) box.append(el('span', { className: 'link-title', textContent: record.title }));
  box.append(target);
  if (record.tags?.length) {
    const chips = record.tags.map((tag) => {
      const chip = button(tag, `Show links tagged ${tag}`, 'secondary tag');
      chip.addEventListener('click', () => filterByTag(tag));
      return el('li', {}, chip);
    });
    box.append(el('ul', { className: 'tags', 'aria-label': `Tags of ${record.short_code}` }, ...chips));
  }
  return box;
}

function row(record) {
  const tr = el('tr');
  tr.dataset.code = record.short_code;
  const cells = [
    ['Code', link(record.short_url, record.short_code), 'code'],
    ['Target', targetCell(record), 'url'],
    ['Created', formatDate(record.created_at), ''],
    ['Visits', visits(record), 'num'],
    ['Expires', expiry(record), ''],
  ];
  for (const [label, value, className] of cells) tr.append(el('td', { 'data-label': label, className }, value));
  const actions = el('td', { className: 'actions' });
  actions.append(...actionButtons(record, tr, actions));
  tr.append(actions);
  return tr;
}

function button(text, label, className = 'secondary small') {
  return el('button', { type: 'button', className, textContent: text, 'aria-label': label });
}

function actionButtons(record, tr, cell) {
  const code = record.short_code;
  const copyButton = button('Copy', `Copy ${code}`);
  copyButton.addEventListener('click', async () => {
    const ok = await copy(record.short_url);
    copyButton.textContent = ok ? 'Copied' : 'Copy failed';
  });
  const qrButton = button('QR', `QR code of ${code}`);
  qrButton.setAttribute('aria-expanded', 'false');
  qrButton.addEventListener('click', () => {
    if (closeDetail(tr, 'qr')) return;
    const box = el('div', { className: 'qr' });
    const detail = openDetail(tr, 'qr', qrButton, box);
    void pending(qrButton, async () => {
      try {
        await showQr(record, box);
      } catch (err) {
        detail.replaceChildren(el('p', { className: 'error', role: 'alert', textContent: err.message }));
      }
    });
  });
  const editButton = button('Edit', `Edit ${code}`);
  editButton.setAttribute('aria-expanded', 'false');
  editButton.addEventListener('click', () => {
    if (closeDetail(tr, 'edit')) return;
    openDetail(tr, 'edit', editButton, editForm(record, tr, editButton));
    $(`edit-url-${code}`).focus();
  });
  // A link, not a button: the stats have their own address (the back button comes back here).
  const stats = el('a', { className: 'button small', href: `#stats/${code}`, 'aria-label': `Stats of ${code}`, 'data-stats': code, textContent: 'Stats' });
  const deleteButton = button('Delete', `Delete ${code}`, 'danger small');
  deleteButton.addEventListener('click', () => confirmDelete(record, cell, deleteButton));
  return [stats, copyButton, qrButton, editButton, deleteButton];
}

/** The row under `tr` that shows its QR code or its edit form: one at a time. */
function openDetail(tr, kind, opener, content) {
  closeDetail(tr);
  const td = el('td', { colspan: '6' }, content);
  const detail = el('tr', { className: `detail ${kind}` }, td);
  detail.dataset.kind = kind;
  tr.after(detail);
  opener.setAttribute('aria-expanded', 'true');
  tr.detailOpener = opener;
  return td;
}

/** Closes the detail row of `tr`; true when it was of `kind` (the opener toggles it). */
function closeDetail(tr, kind) {
  const next = tr.nextElementSibling;
  if (!next?.classList.contains('detail')) return false;
  next.remove();
  tr.detailOpener?.setAttribute('aria-expanded', 'false');
  return next.dataset.kind === kind;
}

function field(id, labelText, input, hint) {
  const wrap = el('div', { className: 'field' }, el('label', { for: id, textContent: labelText }), input);
  if (hint) wrap.append(el('p', { className: 'hint', id: `${id}-help`, textContent: hint }));
  return wrap;
}

function editForm(record, tr, opener) {
  const code = record.short_code;
  const ids = {
    url: `edit-url-${code}`,
    days: `edit-days-${code}`,
    limit: `edit-limit-${code}`,
    title: `edit-title-${code}`,
    tags: `edit-tags-${code}`,
    error: `edit-error-${code}`,
  };
  const url = el('input', { id: ids.url, type: 'url', spellcheck: 'false', 'aria-describedby': ids.error });
  url.value = record.original_url;
  const days = el('input', {
    id: ids.days,
    type: 'number',
    min: '0',
    max: '36500',
    step: '1',
    inputmode: 'numeric',
    placeholder: 'forever',
    'aria-describedby': `${ids.days}-help ${ids.error}`,
  });
  days.value = record.retention_days ? String(record.retention_days) : '';
  const limit = el('input', {
    id: ids.limit,
    type: 'number',
    min: '1',
    step: '1',
    inputmode: 'numeric',
    placeholder: 'unlimited',
    'aria-describedby': `${ids.limit}-help ${ids.error}`,
  });
  limit.value = record.max_visits == null ? '' : String(record.max_visits);
  const title = el('input', { id: ids.title, type: 'text', autocomplete: 'off', placeholder: 'none', 'aria-describedby': ids.error });
  title.value = record.title ?? '';
  const tags = el('input', {
    id: ids.tags,
    type: 'text',
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: 'none',
    'aria-describedby': `${ids.tags}-help ${ids.error}`,
  });
  tags.value = (record.tags ?? []).join(', ');
  const error = el('p', { className: 'error', id: ids.error, role: 'alert', hidden: true });
  const save = el('button', { type: 'submit', textContent: 'Save' });
  const cancel = el('button', { type: 'button', className: 'secondary', textContent: 'Cancel' });
  const form = el(
    'form',
    { className: 'edit-form', novalidate: '', 'aria-label': `Edit ${code}` },
    el(
      'div',
      { className: 'fields' },
      field(ids.url, 'Target', url),
      field(ids.days, 'Keep for (days)', days, `Counted from ${formatDate(record.created_at)}. Empty or 0: forever.`),
      field(ids.limit, 'Visit limit', limit, 'Empty: unlimited.'),
      field(ids.title, 'Title', title),
      field(ids.tags, 'Tags', tags, 'Separated by commas. Empty: none.'),
    ),
    error,
    el('div', { className: 'row wrap' }, save, cancel),
  );
  cancel.addEventListener('click', () => {
    closeDetail(tr);
    opener.focus();
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    showError(error, '');
    const typed = url.value.trim();
    if (!typed) return showError(error, 'Enter the target URL.');
    url.value = withScheme(typed);
    const retention = numberField(days);
    const maxVisits = numberField(limit);
    const body = {
      url: url.value,
      retention_days: retention ?? 0,
      max_visits: maxVisits ?? null,
      title: title.value.trim() || null,
      tags: tagList(tags.value),
    };
    void pending(save, async () => {
      try {
        const res = await api(`api/urls/${encodeURIComponent(code)}`, {
          method: 'PATCH',
          admin: true,
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        });
        if (res.status === 404) throw new Error('This link no longer exists (deleted, or expired).');
        if (!res.ok) throw new Error((await problem(res)).message);
        await loadList(`Saved ${code}.`);
        $('admin-rows')
          .querySelector(`tr[data-code="${CSS.escape(code)}"] button[aria-label="Edit ${CSS.escape(code)}"]`)
          ?.focus();
      } catch (err) {
        showError(error, err.message);
      }
    });
  });
  return form;
}

/** Delete asks first, in place: "Delete 4kZt9q?" then Yes / Cancel, all reachable by keyboard. */
function confirmDelete(record, cell, deleteButton) {
  const code = record.short_code;
  const before = [...cell.childNodes];
  const yes = el('button', { type: 'button', className: 'danger small', textContent: 'Yes, delete' });
  const no = el('button', { type: 'button', className: 'secondary small', textContent: 'Cancel' });
  no.addEventListener('click', () => {
    cell.replaceChildren(...before);
    deleteButton.focus();
  });
  yes.addEventListener('click', () =>
    pending(yes, async () => {
      try {
        const res = await api(`api/urls/${encodeURIComponent(code)}`, { method: 'DELETE', admin: true });
        if (res.status !== 204 && res.status !== 404) throw new Error((await problem(res)).message);
        await loadList(`Deleted ${code}.`);
        $('admin-summary').focus();
      } catch (err) {
        showError($('admin-error'), err.message);
      }
    }),
  );
  cell.replaceChildren(el('span', { className: 'confirm', textContent: `Delete ${code}? ` }), yes, ' ', no);
  no.focus();
}

// ---- Export and import ---------------------------------------------------------------------

for (const format of ['jsonl', 'csv']) {
  const trigger = $(`export-${format}`);
  trigger.addEventListener('click', () => {
    showError($('export-error'), '');
    void pending(trigger, async () => {
      try {
        const res = await api(`api/export?format=${format}`, { admin: true });
        if (!res.ok) throw new Error((await problem(res)).message);
        await saveDownload(res, `urls.${format}`);
      } catch (err) {
        showError($('export-error'), err.message);
      }
    });
  });
}

/**
 * Where an import the store cut short (503) goes on: the file it was, and the line of its first row
 * not stored. Importing that same file again resumes there (`from_line`), so rows without a code
 * are not stored twice; another file starts from its first line.
 */
let resumable = null;
const sameFile = (a, b) => a.name === b.name && a.size === b.size && a.lastModified === b.lastModified;

$('import-form').addEventListener('submit', (event) => {
  event.preventDefault();
  showError($('import-error'), '');
  const file = $('import-file').files?.[0];
  if (!file) return showError($('import-error'), 'Choose a file to import.');
  const csv = /\.csv$/i.test(file.name) || file.type === 'text/csv';
  const from = resumable && sameFile(resumable.file, file) ? resumable.line : undefined;
  void pending($('import-button'), async () => {
    try {
      const path = from === undefined ? 'api/import' : `api/import?from_line=${from}`;
      const res = await api(path, { method: 'POST', admin: true, headers: { 'Content-Type': csv ? 'text/csv' : 'application/x-ndjson' }, body: file });
      if (res.status === 503) {
        const report = await res.json();
        resumable = { file, line: report.line };
        throw new Error(
          `${report.detail ?? 'The service cannot store links right now.'} The rows before line ${report.line} are stored (${report.imported} imported). Import the same file again to go on from line ${report.line}.`,
        );
      }
      if (!res.ok) throw new Error((await problem(res)).message);
      resumable = null;
      showReport(await res.json());
      list.offset = 0;
      await loadList();
    } catch (err) {
      showError($('import-error'), err.message);
    }
  });
});

function showReport({ imported, skipped, errors }) {
  const box = $('import-report');
  const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const lines = errors.map((e) => el('li', { textContent: `Line ${e.line}: ${e.detail}` }));
  box.replaceChildren(el('p', { textContent: `Imported ${plural(imported, 'link')}, skipped ${plural(skipped, 'row')}.` }));
  if (lines.length > 0) box.append(el('ul', {}, ...lines));
  if (skipped > errors.length) box.append(el('p', { className: 'hint', textContent: `The first ${errors.length} reasons are shown.` }));
  box.hidden = false;
}

// ---- Start ---------------------------------------------------------------------------------

$('api-key').value = sessionStorage.getItem(API_KEY_KEY) ?? '';
void checkGate().then(startStats);

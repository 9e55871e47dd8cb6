// "Your links" (docs/ui.md): the admin key, the list newest first with its search, tag filter,
// domain filter (with several domains) and pages, and each row's actions (stats, copy, QR code,
// edit, delete), each on the row's domain. The key lives in sessionStorage, like the token.

import { API_KEY_KEY, api, linkPath, problem } from './api.js';
import { $, copy, el, icon, link, pending, showError } from './dom.js';
import { editForm } from './edit.js';
import { probeLinks } from './gate.js';
import { tagList } from './input.js';
import { showQr } from './qr.js';
import { HOSTS, expiry, formatDate, linkName, routingMarks, statsHref, visits } from './records.js';

const PAGE_SIZE = 20;
const TARGET_CHARS = 48;

/** The page asked (offset, search, tags, domain: '' every one, `default` or a host) and the page shown; `asked` counts the requests (a late answer to an older one is dropped). */
const list = { offset: 0, q: '', tags: [], domain: '', asked: 0, shown: { offset: 0, count: 0, total: 0 } };

/** The host the domain filter names. */
const filterHost = () => (list.domain === 'default' ? HOSTS[0] : list.domain);

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
    if (list.domain) query.set('domain', list.domain);
    const asked = ++list.asked;
    const res = await api(`api/urls?${query}`, { admin: true });
    if (asked !== list.asked) return;
    if (res.status === 403) {
      $('admin-list').hidden = true;
      // An empty 403 is a key not accepted; one with a detail, a key whose role may not list (said as it is).
      throw new Error((await problem(res)).message);
    }
    if (res.status === 400 && (list.q || list.tags.length > 0)) return showError($('search-error'), (await problem(res)).message);
    if (!res.ok) throw new Error((await problem(res)).message);
    const total = Number(res.headers.get('X-Total-Count') ?? 0);
    const { urls } = await res.json();
    if (asked !== list.asked) return;
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

/** The first page again (after an import: the new links are the newest). */
export function showFirstPage() {
  list.offset = 0;
  return loadList();
}

/** “a” and “b”. */
const quoted = (tags) => tags.map((tag) => `“${tag}”`).join(' and ');

function renderList(urls, total, note) {
  $('admin-list').hidden = false;
  const { q, tags } = list;
  const on = list.domain ? ` on ${filterHost()}` : '';
  const matching = (q ? ` matching “${q}”` : '') + (tags.length > 0 ? ` tagged ${quoted(tags)}` : '') + on;
  const summary =
    total === 0
      ? q && tags.length > 0
        ? `No links${on} match “${q}” and are tagged ${quoted(tags)}.`
        : q
          ? `No links${on} match “${q}”.`
          : tags.length > 0
            ? `No links${on} are tagged ${quoted(tags)}.`
            : `No links${on} yet.`
      : `Links ${list.offset + 1}–${list.offset + urls.length} of ${total}${matching}, newest first.`;
  $('admin-summary').textContent = note ? `${note} ${summary}` : summary;
  $('admin-rows').replaceChildren(...urls.map(row));
  list.shown = { offset: list.offset, count: urls.length, total };
  updatePager();
}

/** A tag of a row, chosen: the list shows the links having it (the filter field says so). */
function filterByTag(tag) {
  $('tag-filter').value = tag;
  list.tags = [tag];
  list.offset = 0;
  void loadList().then(() => $('admin-summary').focus());
}

/**
 * The URL's text with a line break allowed after each `/` (not inside `//`), `.`, `-` and `_` and
 * before each `?`, `&`, `#` and `=`, so a long URL wraps between its parts; the stylesheet breaks
 * inside a part only when the part alone is wider than the column.
 */
function breakable(text) {
  return text.split(/(?<=[/.\-_])(?!\/)|(?=[?&#=])/).flatMap((part, i) => (i === 0 ? [part] : [el('wbr'), part]));
}

/** The target cell: the title above the (shortened) URL, the tags under it as chips that filter the list, then marks of its rules, password and validity. */
function targetCell(record) {
  const url = record.original_url;
  const target = link(url);
  target.replaceChildren(...breakable(url.length > TARGET_CHARS ? `${url.slice(0, TARGET_CHARS - 1)}…` : url));
  target.title = url;
  const box = el('div', { className: 'target' });
  // At most two lines of the title show (the stylesheet cuts it); the whole of it on hover.
  if (record.title) box.append(el('span', { className: 'link-title', textContent: record.title, title: record.title }));
  box.append(target);
  if (record.tags?.length) {
    const chips = record.tags.map((tag) => {
      const chip = el('button', { type: 'button', className: 'secondary tag', textContent: tag, 'aria-label': `Show links tagged ${tag}` });
      chip.addEventListener('click', () => filterByTag(tag));
      return el('li', {}, chip);
    });
    box.append(el('ul', { className: 'tags', 'aria-label': `Tags of ${linkName(record.short_code, record.domain)}` }, ...chips));
  }
  const marks = routingMarks(record);
  if (marks.length) {
    const name = `How ${linkName(record.short_code, record.domain)} sends visitors`;
    box.append(el('ul', { className: 'tags', 'aria-label': name }, ...marks.map((text) => el('li', { className: 'mark', textContent: text }))));
  }
  return box;
}

/** The code as the short link; with several domains, its domain's host under it. */
function codeCell(record) {
  const short = link(record.short_url, record.short_code);
  if (HOSTS.length < 2) return short;
  return el('div', {}, short, el('span', { className: 'domain-name', textContent: record.domain ?? HOSTS[0] }));
}

function row(record) {
  const tr = el('tr');
  tr.dataset.code = record.short_code;
  tr.dataset.domain = record.domain ?? '';
  const cells = [
    ['Code', codeCell(record), 'code'],
    ['Target', targetCell(record), 'url'],
    ['Created', formatDate(record.created_at), 'date'],
    ['Visits', visits(record), 'num'],
    ['Expires', expiry(record), 'date'],
  ];
  for (const [label, value, className] of cells) tr.append(el('td', { 'data-label': label, className }, value));
  const actions = el('td', { className: 'actions' });
  actions.append(...actionButtons(record, tr, actions));
  tr.append(actions);
  return tr;
}

/**
 * A row's action as an icon, so the target has the row's width: its name (`Edit 4kZt9q`) is for
 * screen readers, its tooltip (`Edit`) for the pointer.
 */
function iconButton(name, label, tip, className = 'secondary icon') {
  return el('button', { type: 'button', className, 'aria-label': label, title: tip }, icon(name));
}

function actionButtons(record, tr, cell) {
  const code = linkName(record.short_code, record.domain);
  const copyButton = iconButton('copy', `Copy ${code}`, 'Copy');
  copyButton.addEventListener('click', async () => {
    if (await copy(record.short_url)) {
      copyButton.title = 'Copied';
      copyButton.replaceChildren(icon('done'), el('span', { className: 'visually-hidden', textContent: 'Copied' }));
    } else {
      copyButton.classList.remove('icon');
      copyButton.replaceChildren('Copy failed');
    }
  });
  const qrButton = iconButton('qr', `QR code of ${code}`, 'QR code');
  qrButton.setAttribute('aria-expanded', 'false');
  qrButton.addEventListener('click', () => toggleQr(record, tr, qrButton));
  const editButton = iconButton('edit', `Edit ${code}`, 'Edit');
  editButton.setAttribute('aria-expanded', 'false');
  editButton.addEventListener('click', () => toggleEdit(record, tr, editButton));
  // A link, not a button: the stats have their own address (the back button comes back here).
  const stats = el(
    'a',
    { className: 'button icon', href: statsHref(record.short_code, record.domain), 'aria-label': `Stats of ${code}`, title: 'Stats', 'data-stats': code },
    icon('stats'),
  );
  const deleteButton = iconButton('delete', `Delete ${code}`, 'Delete', 'danger icon');
  deleteButton.addEventListener('click', () => confirmDelete(record, cell, deleteButton));
  return [stats, copyButton, qrButton, editButton, deleteButton];
}

function toggleQr(record, tr, qrButton) {
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
}

function toggleEdit(record, tr, editButton) {
  if (closeDetail(tr, 'edit')) return;
  const code = linkName(record.short_code, record.domain);
  const form = editForm(record, {
    cancel: () => {
      closeDetail(tr);
      editButton.focus();
    },
    saved: async () => {
      await loadList(`Saved ${code}.`);
      $('admin-rows')
        .querySelector(`tr[data-domain="${CSS.escape(tr.dataset.domain)}"] button[aria-label="Edit ${CSS.escape(code)}"]`)
        ?.focus();
    },
  });
  openDetail(tr, 'edit', editButton, form);
  // The target, the form's first field.
  form.querySelector('input').focus();
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

/** Delete asks first, in place: "Delete 4kZt9q?" then Yes / Cancel, all reachable by keyboard. */
function confirmDelete(record, cell, deleteButton) {
  const code = linkName(record.short_code, record.domain);
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
        const res = await api(linkPath(record.short_code, record.domain), { method: 'DELETE', admin: true });
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

/** The domain filter, when the instance has several: every domain, or one (`default` names the default one). */
function showDomainFilter() {
  if (HOSTS.length < 2) return;
  const options = [['', 'All domains'], ...HOSTS.map((host, i) => [i === 0 ? 'default' : host, host])];
  $('domain-filter').replaceChildren(...options.map(([value, text]) => el('option', { value, textContent: text })));
  $('domain-filter-field').hidden = false;
  // A domain chosen shows its links at once, as a tag chosen does.
  $('domain-filter').addEventListener('change', () => $('search-form').requestSubmit());
}

/** The key form, the search form and the pager; the key kept from before fills its field. */
export function startLinks() {
  showDomainFilter();
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
    list.domain = $('domain-filter').value;
    list.offset = 0;
    void pending($('search-button'), () => loadList());
  });
  $('prev-page').addEventListener('click', () => {
    list.offset = Math.max(0, list.offset - PAGE_SIZE);
    void pending($('prev-page'), () => loadList()).then(updatePager);
  });
  $('next-page').addEventListener('click', () => {
    list.offset += PAGE_SIZE;
    void pending($('next-page'), () => loadList()).then(updatePager);
  });
  $('api-key').value = sessionStorage.getItem(API_KEY_KEY) ?? '';
}

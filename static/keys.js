// The API keys (docs/ui.md, keys): a view of the page at `#keys`, for admin keys. A key is made
// with a name, a role and an optional expiry; its secret is shown once, with a copy button, and
// forgotten as soon as the view is left; the stored keys are listed, each revoked after a
// confirmation in place. The key the page sends is the one of "Your links" (sessionStorage).

import { API_KEY_KEY, adminKey, problem } from './api.js';
import { $, copy, el, pending, showError, showOnce } from './dom.js';
import { formatDate } from './records.js';

/** The roles, least first (the select's order), each with what it may do in one line. */
const ROLES = [
  ['creator', 'Creator', 'Makes links and nothing else: the key for ShareX, a browser extension or a phone shortcut.'],
  ['viewer', 'Viewer', 'Reads every link, its stats and the exports; never makes, edits or deletes one.'],
  ['editor', 'Editor', 'Makes links, and reads, edits and deletes the links it made; no others.'],
  ['admin', 'Admin', 'Everything, imports and these keys included.'],
];
const roleName = (role) => ROLES.find(([value]) => value === role)?.[1] ?? role;

const isKeysView = () => location.hash === '#keys';

/** A `detail` of the API about one of the form's fields, said in the form's words. */
const FIELD_REASONS = [
  [/^name\b/, 'key-name-error', 'The name must be 1 to 64 characters, without control characters.'],
  [/^expires_at\b/, 'key-expires-error', 'Choose a day after today, or none.'],
];

/** The form asking for an admin key: shown when none is kept, it was refused, or its role may not manage keys. */
const { askKey, withKey } = adminKey('keys');

/** Loads the stored keys; `note` (what just happened) leads the summary. */
async function loadKeys(note = '') {
  showError($('keys-error'), '');
  if (!sessionStorage.getItem(API_KEY_KEY)) return askKey('');
  try {
    const res = await withKey('api/keys');
    if (!res) return;
    if (!res.ok) throw new Error((await problem(res)).message);
    const { keys } = await res.json();
    $('keys-key-form').hidden = true;
    $('keys-body').hidden = false;
    const summary = keys.length === 0 ? 'No stored keys yet.' : `${keys.length} stored ${keys.length === 1 ? 'key' : 'keys'}, oldest first.`;
    $('keys-summary').textContent = note ? `${note} ${summary}` : summary;
    $('key-rows').replaceChildren(...keys.map(row));
  } catch (err) {
    showError($('keys-error'), err.message);
  }
}

/** A date of a key, or "Never" for none; an expiry passed says so. */
function when(seconds, expiry = false) {
  if (seconds == null) return 'Never';
  return expiry && seconds * 1000 <= Date.now() ? `${formatDate(seconds)} (expired)` : formatDate(seconds);
}

function row(key) {
  const tr = el('tr');
  tr.dataset.id = key.id;
  const cells = [
    ['Name', key.name, 'name'],
    ['Role', roleName(key.role), 'role'],
    ['Created', when(key.created_at), 'date'],
    ['Last used', when(key.last_used_at), 'date'],
    ['Expires', when(key.expires_at, true), 'date'],
  ];
  for (const [label, value, className] of cells) tr.append(el('td', { 'data-label': label, className }, value));
  const cell = el('td', { className: 'actions' });
  const revoke = el('button', { type: 'button', className: 'danger small', textContent: 'Revoke', 'aria-label': `Revoke ${key.name}` });
  revoke.addEventListener('click', () => confirmRevoke(key, cell, revoke));
  cell.append(revoke);
  tr.append(cell);
  return tr;
}

/** Revoke asks first, in place, as a link's Delete does: "Revoke ShareX?" then Yes / Cancel, focus on Cancel. */
function confirmRevoke(key, cell, revoke) {
  const yes = el('button', { type: 'button', className: 'danger small', textContent: 'Yes, revoke' });
  const no = el('button', { type: 'button', className: 'secondary small', textContent: 'Cancel' });
  no.addEventListener('click', () => {
    cell.replaceChildren(revoke);
    revoke.focus();
  });
  yes.addEventListener('click', () =>
    pending(yes, async () => {
      try {
        const res = await withKey(`api/keys/${encodeURIComponent(key.id)}`, { method: 'DELETE' });
        if (!res) return;
        // Gone already (revoked elsewhere): the list says so either way.
        if (res.status !== 204 && res.status !== 404) throw new Error((await problem(res)).message);
        await loadKeys(`Revoked “${key.name}”: it no longer works.`);
        $('keys-summary').focus();
      } catch (err) {
        showError($('keys-error'), err.message);
      }
    }),
  );
  cell.replaceChildren(el('span', { className: 'confirm', textContent: `Revoke “${key.name}”? Whatever uses it stops working. ` }), yes, ' ', no);
  no.focus();
}

/** Unix seconds of the start of a `YYYY-MM-DD` day in the browser's time zone. */
function startOfDay(value) {
  const [year, month, day] = value.split('-').map(Number);
  return Math.floor(new Date(year, month - 1, day).getTime() / 1000);
}

function clearFormErrors() {
  for (const id of ['key-name-error', 'key-expires-error', 'key-form-error']) showError($(id), '');
}

function createKey(event) {
  event.preventDefault();
  clearFormErrors();
  forgetSecret();
  const name = $('key-name').value.trim();
  if (!name) return fieldError('key-name-error', 'key-name', 'Enter a name: what the key is for.');
  const input = { name, role: $('key-role').value };
  if ($('key-expires').value) {
    input.expires_at = startOfDay($('key-expires').value);
    if (input.expires_at * 1000 <= Date.now()) return fieldError('key-expires-error', 'key-expires', 'Choose a day after today, or none.');
  }
  void pending($('key-create'), async () => {
    try {
      const res = await withKey('api/keys', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(input) });
      if (!res) return;
      if (!res.ok) return await refused(res);
      const made = await res.json();
      // Emptied for the next key, and back to the least role: the next key is not an admin by mistake.
      $('key-name').value = '';
      $('key-expires').value = '';
      $('key-role').value = ROLES[0][0];
      describeRole();
      showSecret(made);
      await loadKeys(`Made the key “${made.name}”.`);
    } catch (err) {
      showError($('key-form-error'), err.message);
    }
  });
}

function fieldError(errorId, inputId, message) {
  showError($(errorId), message);
  $(inputId).focus();
}

/** A create refused: the reason beside its field when it is about one, else under the form. */
async function refused(res) {
  const detail = await res
    .clone()
    .json()
    .then((body) => body.detail ?? '')
    .catch(() => '');
  const field = FIELD_REASONS.find(([pattern]) => pattern.test(detail));
  if (field) return fieldError(field[1], field[1].replace(/-error$/, ''), field[2]);
  showError($('key-form-error'), (await problem(res)).message);
}

/** The secret of the key just made, this once. */
const showSecret = (made) => showOnce('key', `The secret of “${made.name}” (${roleName(made.role)}):`, made.key);
const forgetSecret = () => showOnce('key');

/** The role's line under the select, for the role chosen. */
function describeRole() {
  $('key-role-help').textContent = ROLES.find(([value]) => value === $('key-role').value)?.[2] ?? '';
}

/**
 * Shows the keys at `#keys`, or leaves them. The stats route every other fragment to the home
 * view, so this runs after theirs (see `app.js`) and hides the home view again for `#keys`.
 */
function route() {
  const on = isKeysView();
  $('keys').hidden = !on;
  if (on) $('home').hidden = true;
  // The view shown is the current page of the navigation (the stats are neither).
  const current = { 'home-link': location.hash === '' || location.hash === '#', 'keys-link': on };
  for (const [id, yes] of Object.entries(current)) {
    if (yes) $(id).setAttribute('aria-current', 'page');
    else $(id).removeAttribute('aria-current');
  }
  if (!on) return forgetSecret();
  clearFormErrors();
  $('keys-title').focus();
  void loadKeys();
}

export function startKeys() {
  $('key-role').replaceChildren(...ROLES.map(([value, label]) => el('option', { value, textContent: label })));
  describeRole();
  $('key-role').addEventListener('change', describeRole);
  $('key-form').addEventListener('submit', createKey);
  $('key-copy').addEventListener('click', async () => {
    const ok = await copy($('key-secret').textContent);
    $('key-copy-status').textContent = ok ? 'Copied' : 'Copy failed: select the key and copy it by hand.';
  });
  $('keys-key-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const key = $('keys-key').value;
    if (!key) return showError($('keys-key-error'), 'Enter an admin API key.');
    sessionStorage.setItem(API_KEY_KEY, key);
    // The same key serves your links and the stats.
    $('api-key').value = key;
    void pending($('keys-key-button'), () => loadKeys());
  });
  window.addEventListener('hashchange', route);
  route();
}

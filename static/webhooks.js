// The webhooks (docs/ui.md, webhooks): a view of the page at `#webhooks`, for admin keys, which
// the header names only once the key kept in this tab is known to be an admin's. A subscription is
// made with its receiver's URL, the events it wants and, with several domains, the domain whose
// links it follows; its signing secret is shown once, with a copy button, and
// forgotten as soon as the view is left. The subscriptions are listed, each with a test delivery
// (a `ping`), its last attempts, and Delete after a confirmation in place. The key the page sends
// is the one of "Your links" (sessionStorage).

import { API_KEY_KEY, adminKey, api, problem } from './api.js';
import { $, copy, el, pending, showError, showOnce } from './dom.js';
import { withScheme } from './input.js';
import { formatDate, HOSTS } from './records.js';

/** The events a subscription may ask for, in the API's order, each with what it tells. */
const EVENTS = [
  ['link.created', 'A link was made.'],
  ['link.updated', 'A link was edited.'],
  ['link.deleted', 'A link was deleted.'],
  ['link.clicked', 'A visit was counted.'],
  ['link.limit_reached', 'A visit used up a link’s visit limit.'],
];

/** What became of an attempt, in words. */
const OUTCOMES = {
  delivered: 'Delivered',
  retry: 'Failed, to be tried again',
  failed: 'Failed, given up',
  disabled: 'Disabled: the receiver is gone',
};

/** How often, and how many times, the deliveries are read again while a test ping is awaited. */
const WATCH_MS = 500;
const WATCH_TRIES = 20;

const isWebhooksView = () => location.hash === '#webhooks';

/** The forms where a key is entered (your links, the stats, the keys, the domains): a new key may be an admin's, or no longer. */
const KEY_FORMS = new Set(['admin-form', 'stats-key-form', 'keys-key-form', 'domains-key-form']);

/** A `detail` of the API about one of the form's fields, by its first word: the field's error and the control to focus. */
const FIELD_ERRORS = [
  [/^url\b/, 'webhook-url-error', 'webhook-url'],
  [/^events\b/, 'webhook-events-error', 'webhook-event-0'],
  [/^domain\b/, 'webhook-domain-error', 'webhook-domain'],
];

/** The header's link to the view: shown for an admin's key alone. */
function showLink(admin) {
  $('webhooks-link').hidden = !admin;
}

/**
 * Whether the key kept in this tab is an admin's, asked with the list of subscriptions (no other
 * key may read it), for the header's link; the view itself asks again when it opens.
 */
async function probeKey() {
  if (!sessionStorage.getItem(API_KEY_KEY)) return showLink(false);
  try {
    showLink((await api('api/webhooks', { admin: true })).ok);
  } catch {
    // unreachable: the link stays as it was
  }
}

/** The form asking for an admin key (shown when none is kept, it was refused, or its role may not manage webhooks), and requests with it. */
const { askKey, withKey } = adminKey('webhooks', () => showLink(false));

/** Loads the subscriptions; `note` (what just happened) leads the summary. */
async function loadWebhooks(note = '') {
  showError($('webhooks-error'), '');
  if (!sessionStorage.getItem(API_KEY_KEY)) return askKey('');
  try {
    const res = await withKey('api/webhooks');
    if (!res) return;
    if (!res.ok) throw new Error((await problem(res)).message);
    const { webhooks } = await res.json();
    showLink(true);
    $('webhooks-key-form').hidden = true;
    $('webhooks-body').hidden = false;
    const summary =
      webhooks.length === 0 ? 'No subscriptions yet.' : `${webhooks.length} ${webhooks.length === 1 ? 'subscription' : 'subscriptions'}, oldest first.`;
    $('webhooks-summary').textContent = note ? `${note} ${summary}` : summary;
    $('webhook-rows').replaceChildren(...webhooks.map(row));
  } catch (err) {
    showError($('webhooks-error'), err.message);
  }
}

function row(sub) {
  const tr = el('tr');
  tr.dataset.id = sub.id;
  const events = el('ul', { className: 'event-names' }, ...sub.events.map((type) => el('li', { textContent: type })));
  const cells = [
    ['Receiver', sub.url, 'url'],
    ['Events', events, 'events'],
    ['Domain', sub.domain ?? 'Every domain', 'domain'],
    ['Created', formatDate(sub.created_at), 'date'],
    ['Status', sub.disabled ? 'Disabled by the receiver (410)' : 'Active', sub.disabled ? 'state disabled' : 'state'],
  ];
  for (const [label, value, className] of cells) tr.append(el('td', { 'data-label': label, className }, value));
  const cell = el('td', { className: 'actions' });
  const test = el('button', { type: 'button', className: 'secondary small', textContent: 'Send test', 'aria-label': `Send test to ${sub.url}` });
  const shown = el('button', {
    type: 'button',
    className: 'secondary small',
    textContent: 'Deliveries',
    'aria-label': `Deliveries to ${sub.url}`,
    'aria-expanded': 'false',
  });
  const remove = el('button', { type: 'button', className: 'danger small', textContent: 'Delete', 'aria-label': `Delete ${sub.url}` });
  test.addEventListener('click', () => sendTest(sub, tr, test, shown));
  shown.addEventListener('click', () => toggleDeliveries(sub, tr, shown));
  remove.addEventListener('click', () => confirmDelete(sub, cell));
  cell.append(test, shown, remove);
  tr.append(cell);
  return tr;
}

/** The row under `tr` with its deliveries, when open. */
const panelOf = (tr) => (tr.nextElementSibling?.classList.contains('detail') ? tr.nextElementSibling.panel : undefined);

/** Opens the deliveries of `sub` under its row, or closes them. */
function toggleDeliveries(sub, tr, opener) {
  if (panelOf(tr)) {
    tr.nextElementSibling.remove();
    opener.setAttribute('aria-expanded', 'false');
    return;
  }
  const panel = openDeliveries(sub, tr, opener);
  void pending(panel.refresh, () => loadDeliveries(sub, panel));
}

/** The deliveries' row under `tr`: Refresh, a status, an error and the table of attempts. */
function openDeliveries(sub, tr, opener) {
  const id = `deliveries-${sub.id}`;
  const refresh = el('button', { type: 'button', className: 'secondary small', textContent: 'Refresh', 'aria-describedby': `${id}-title` });
  const status = el('p', { className: 'status', role: 'status' });
  const error = el('p', { className: 'error', role: 'alert', hidden: true });
  const rows = el('tbody');
  const heads = ['Time', 'Event id', 'Type', 'Status', 'Duration', 'Outcome', 'Error'];
  const table = el(
    'table',
    { className: 'deliveries-table' },
    el('caption', { className: 'visually-hidden', textContent: `Deliveries to ${sub.url}, newest first` }),
    el(
      'thead',
      {},
      el('tr', {}, ...heads.map((text) => el('th', { scope: 'col', textContent: text, className: /^(Status|Duration)$/.test(text) ? 'num' : '' }))),
    ),
    rows,
  );
  const box = el(
    'div',
    { className: 'deliveries', id },
    el('div', { className: 'deliveries-head' }, el('h4', { id: `${id}-title`, textContent: `Deliveries to ${sub.url}` }), refresh),
    status,
    error,
    table,
  );
  const detail = el('tr', { className: 'detail' }, el('td', { colspan: '6' }, box));
  const panel = { refresh, status, error, rows, watching: '' };
  detail.panel = panel;
  tr.after(detail);
  opener.setAttribute('aria-expanded', 'true');
  refresh.addEventListener('click', () => pending(refresh, () => loadDeliveries(sub, panel)));
  return panel;
}

const timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

function attemptRow(attempt) {
  const cells = [
    ['Time', timeFormat.format(new Date(attempt.at)), 'date'],
    ['Event id', el('code', { textContent: attempt.event_id }), 'event-id'],
    ['Type', attempt.type, 'type'],
    ['Status', attempt.status == null ? 'None' : String(attempt.status), 'num'],
    ['Duration', `${attempt.duration_ms.toLocaleString()} ms`, 'num'],
    ['Outcome', OUTCOMES[attempt.outcome] ?? attempt.outcome, `outcome ${attempt.outcome}`],
    ['Error', attempt.error ?? 'None', 'reason'],
  ];
  const tr = el('tr');
  tr.dataset.event = attempt.event_id;
  for (const [label, value, className] of cells) tr.append(el('td', { 'data-label': label, className }, value));
  return tr;
}

/** Reads the attempts of `sub` into its panel; the attempt of the event awaited, if any, once there. */
async function loadDeliveries(sub, panel) {
  showError(panel.error, '');
  try {
    const res = await withKey(`api/webhooks/${encodeURIComponent(sub.id)}/deliveries`);
    // The key was refused: its prompt is shown, and nothing more is awaited.
    if (!res) {
      panel.watching = '';
      return undefined;
    }
    if (res.status === 404) throw new Error('This subscription no longer exists: deleted elsewhere.');
    if (!res.ok) throw new Error((await problem(res)).message);
    const { deliveries } = await res.json();
    panel.rows.replaceChildren(...deliveries.map(attemptRow));
    const summary =
      deliveries.length === 0
        ? 'No attempts yet.'
        : `${deliveries.length} ${deliveries.length === 1 ? 'attempt' : 'attempts'}, newest first (the last 100 are kept).`;
    const awaited = panel.watching && deliveries.find((attempt) => attempt.event_id === panel.watching);
    if (panel.watching && !awaited) panel.status.textContent = `Test ping queued; waiting for its delivery. ${summary}`;
    else if (awaited) {
      panel.watching = '';
      const status = awaited.status == null ? '' : ` (${awaited.status})`;
      panel.status.textContent = `Test ping: ${OUTCOMES[awaited.outcome]?.toLowerCase() ?? awaited.outcome}${status}. ${summary}`;
    } else panel.status.textContent = summary;
    return awaited;
  } catch (err) {
    showError(panel.error, err.message);
    panel.watching = '';
    return undefined;
  }
}

const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Queues a `ping` for `sub`, then opens its deliveries and reads them again every half second
 * until the ping's attempt is there (it is sent in the background), ten seconds at most.
 */
function sendTest(sub, tr, button, opener) {
  void pending(button, async () => {
    const panel = panelOf(tr) ?? openDeliveries(sub, tr, opener);
    showError(panel.error, '');
    try {
      const res = await withKey(`api/webhooks/${encodeURIComponent(sub.id)}/test`, { method: 'POST' });
      if (!res) return;
      if (res.status === 404) throw new Error('This subscription no longer exists: deleted elsewhere.');
      if (!res.ok) throw new Error((await problem(res)).message);
      const { event_id } = await res.json();
      panel.watching = event_id;
      panel.status.textContent = 'Test ping queued; waiting for its delivery.';
      for (let i = 0; i < WATCH_TRIES && panel.watching === event_id && panel.status.isConnected; i++) {
        if (await loadDeliveries(sub, panel)) return;
        await wait(WATCH_MS);
      }
      if (panel.watching === event_id) {
        panel.watching = '';
        panel.status.textContent = 'The test ping is not delivered yet: Refresh to see its attempts.';
      }
    } catch (err) {
      showError(panel.error, err.message);
    }
  });
}

/** Delete asks first, in place, as a key's Revoke does: "Delete the subscription of …?" then Yes / Cancel, focus on Cancel. */
function confirmDelete(sub, cell) {
  const before = [...cell.childNodes];
  const remove = before.at(-1);
  const yes = el('button', { type: 'button', className: 'danger small', textContent: 'Yes, delete' });
  const no = el('button', { type: 'button', className: 'secondary small', textContent: 'Cancel' });
  no.addEventListener('click', () => {
    cell.replaceChildren(...before);
    remove.focus();
  });
  yes.addEventListener('click', () =>
    pending(yes, async () => {
      try {
        const res = await withKey(`api/webhooks/${encodeURIComponent(sub.id)}`, { method: 'DELETE' });
        if (!res) return;
        // Gone already (deleted elsewhere): the list says so either way.
        if (res.status !== 204 && res.status !== 404) throw new Error((await problem(res)).message);
        await loadWebhooks(`Deleted the subscription of ${sub.url}.`);
        $('webhooks-summary').focus();
      } catch (err) {
        showError($('webhooks-error'), err.message);
      }
    }),
  );
  const text = `Delete the subscription of ${sub.url}? Nothing more is sent to it, not even what is still owed. `;
  cell.replaceChildren(el('span', { className: 'confirm', textContent: text }), yes, ' ', no);
  no.focus();
}

function clearFormErrors() {
  for (const id of ['webhook-url-error', 'webhook-events-error', 'webhook-domain-error', 'webhook-form-error']) showError($(id), '');
}

function fieldError(errorId, inputId, message) {
  showError($(errorId), message);
  $(inputId).focus();
}

const eventBoxes = () => [...$('webhook-event-list').querySelectorAll('input[type="checkbox"]')];

function createWebhook(event) {
  event.preventDefault();
  clearFormErrors();
  forgetSecret();
  const typed = $('webhook-url').value.trim();
  if (!typed) return fieldError('webhook-url-error', 'webhook-url', 'Enter the URL of the receiver.');
  $('webhook-url').value = withScheme(typed);
  const events = eventBoxes()
    .filter((box) => box.checked)
    .map((box) => box.value);
  if (events.length === 0) return fieldError('webhook-events-error', 'webhook-event-0', 'Choose one or more events.');
  const input = { url: $('webhook-url').value, events };
  // Every domain's links unless one is chosen.
  if ($('webhook-domain').value) input.domain = $('webhook-domain').value;
  void pending($('webhook-create'), async () => {
    try {
      const res = await withKey('api/webhooks', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(input) });
      if (!res) return;
      if (!res.ok) return await refused(res);
      const made = await res.json();
      // Emptied for the next subscription.
      $('webhook-url').value = '';
      for (const box of eventBoxes()) box.checked = false;
      $('webhook-domain').value = '';
      showSecret(made);
      await loadWebhooks(`Subscribed ${made.url}.`);
    } catch (err) {
      showError($('webhook-form-error'), err.message);
    }
  });
}

/** A create refused: the reason beside its field when it is about one, else under the form. */
async function refused(res) {
  const detail = await res
    .clone()
    .json()
    .then((body) => body.detail ?? '')
    .catch(() => '');
  const { message } = await problem(res);
  const field = FIELD_ERRORS.find(([pattern]) => pattern.test(detail));
  if (field) return fieldError(field[1], field[2], message);
  showError($('webhook-form-error'), message);
}

/** The signing secret of the subscription just made, this once. */
const showSecret = (made) => showOnce('webhook', `The signing secret of the subscription of ${made.url}:`, made.secret);
const forgetSecret = () => showOnce('webhook');

/** One checkbox per event, its description under its name. */
function eventChoices() {
  return EVENTS.map(([type, description], i) => {
    const id = `webhook-event-${i}`;
    return el(
      'div',
      { className: 'event' },
      el(
        'div',
        { className: 'check' },
        el('input', { type: 'checkbox', id, name: 'events', value: type, 'aria-describedby': `${id}-help` }),
        el('label', { for: id }, el('code', { textContent: type })),
      ),
      el('p', { className: 'hint', id: `${id}-help`, textContent: description }),
    );
  });
}

/** The domain picker, when the instance has several: every domain (the default), or one. */
function showDomainPicker() {
  if (HOSTS.length < 2) return;
  const options = [['', 'Every domain'], ...HOSTS.map((host) => [host, host])];
  $('webhook-domain').replaceChildren(...options.map(([value, text]) => el('option', { value, textContent: text })));
  $('webhook-domain-field').hidden = false;
}

/**
 * Shows the webhooks at `#webhooks`, or leaves them. Runs after the stats', the keys' and the
 * domains' routes (see `app.js`), which hide their views and show the home view for every fragment
 * not theirs.
 */
function route() {
  const on = isWebhooksView();
  $('webhooks').hidden = !on;
  if (on) $('home').hidden = true;
  if (on) $('webhooks-link').setAttribute('aria-current', 'page');
  else $('webhooks-link').removeAttribute('aria-current');
  if (!on) return forgetSecret();
  clearFormErrors();
  $('webhooks-title').focus();
  void loadWebhooks();
}

export function startWebhooks() {
  $('webhook-event-list').replaceChildren(...eventChoices());
  showDomainPicker();
  $('webhook-form').addEventListener('submit', createWebhook);
  $('webhook-copy').addEventListener('click', async () => {
    const ok = await copy($('webhook-secret').value);
    $('webhook-copy-status').textContent = ok ? 'Copied' : 'Copy failed: select the secret and copy it by hand.';
  });
  $('webhooks-key-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const key = $('webhooks-key').value;
    if (!key) return showError($('webhooks-key-error'), 'Enter an admin API key.');
    sessionStorage.setItem(API_KEY_KEY, key);
    // The same key serves your links, the stats, the keys and the domains.
    $('api-key').value = key;
    void pending($('webhooks-key-button'), () => loadWebhooks());
  });
  // After the form's own handler, which keeps the key entered.
  document.addEventListener('submit', (event) => {
    if (KEY_FORMS.has(event.target.id)) void probeKey();
  });
  window.addEventListener('hashchange', route);
  // The view asks for itself; elsewhere a key kept from before is asked about once.
  if (!isWebhooksView() && sessionStorage.getItem(API_KEY_KEY)) void probeKey();
  route();
}

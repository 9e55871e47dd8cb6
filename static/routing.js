// Where a link sends each visitor (docs/ui.md, your links): the edit form's section of rules,
// query forwarding, validity, fallback URL and password. Of these the form sends only what was
// changed, so an edit of the title never touches them. Dates are read in the browser's time zone.

import { el } from './dom.js';
import { withScheme } from './input.js';

const MAX_RULES = 10;
const MAX_CONDITIONS = 10;

/**
 * Each condition type: its name in the picker, the label of its value, and the value's input: a
 * list (a select; an object names its values), `date` (a date and time, sent as Unix seconds), a
 * text's placeholder, or no value at all (`null` label).
 */
const TYPES = {
  device: [
    'Device',
    'Device',
    {
      android: 'Android',
      ios: 'iOS',
      mobile: 'Mobile (phone or tablet)',
      desktop: 'Desktop',
      windows: 'Windows',
      macos: 'macOS',
      linux: 'Linux',
      chromeos: 'ChromeOS',
    },
  ],
  browser: ['Browser', 'Browser', ['Chrome', 'Safari', 'Firefox', 'Edge', 'Opera', 'Samsung Internet', 'Other']],
  language: ['Language', 'Language', 'fr or fr-CA'],
  country: ['Country', 'Country code', 'FR'],
  'query-param': ['Query parameter is', 'Value', 'exact value'],
  'any-value-query-param': ['Query parameter present', null],
  'ip-address': ['IP address', 'Address or range', '10.0.0.0/8'],
  'before-date': ['Before', 'Date and time', 'date'],
  'after-date': ['After', 'Date and time', 'date'],
};

/** Only the query-parameter types name a parameter (`key`); the API takes `null` for the others. */
const hasKey = (type) => type.endsWith('query-param');

const listOf = (kind) => (Array.isArray(kind) ? kind.map((v) => [v, v]) : Object.entries(kind));

/** A new condition of `type`: a list's first value, else empty. */
function blank(type) {
  const kind = TYPES[type][2];
  return { type, key: hasKey(type) ? '' : null, value: typeof kind === 'object' ? listOf(kind)[0][0] : '' };
}

const pad = (n) => String(n).padStart(2, '0');

/** Unix seconds as a `datetime-local` value in the browser's time zone ('' for none); seconds only when there are some. */
function localTime(seconds) {
  if (seconds == null || seconds === '') return '';
  const d = new Date(Number(seconds) * 1000);
  const s = d.getSeconds() ? `:${pad(d.getSeconds())}` : '';
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}${s}`;
}

/** A `datetime-local` value as Unix seconds (it has no offset, so it is read as local time); null when empty. */
const unixTime = (text) => (text ? Math.floor(new Date(text).getTime() / 1000) : null);

/** A control with its visible label (and hint, which it is described by), as one field of a grid. */
function field(id, text, control, hint, className = 'field') {
  control.id = id;
  const wrap = el('div', { className }, el('label', { for: id, textContent: text }), control);
  if (hint) {
    control.setAttribute('aria-describedby', `${id}-help`);
    wrap.append(el('p', { className: 'hint', id: `${id}-help`, textContent: hint }));
  }
  return wrap;
}

/** A checkbox with its label beside it. */
function check(id, text, checked) {
  const box = el('input', { type: 'checkbox', id, ...(checked ? { checked: '' } : {}) });
  return [box, el('div', { className: 'field wide check' }, box, el('label', { for: id, textContent: text }))];
}

/** `control` showing `object[name]`, which follows what is typed or chosen. */
function bind(control, object, name) {
  control.value = object[name] ?? '';
  control.addEventListener('input', () => {
    object[name] = control.value;
  });
  return control;
}

function button(id, text, disabled, onClick) {
  const b = el('button', { type: 'button', className: 'secondary small', id, textContent: text });
  b.disabled = disabled;
  b.addEventListener('click', onClick);
  return b;
}

/** The input of a condition's value, as its type takes it. */
function valueInput(condition, kind) {
  if (typeof kind === 'object') {
    return bind(el('select', {}, ...listOf(kind).map(([value, text]) => el('option', { value, textContent: text }))), condition, 'value');
  }
  if (kind !== 'date') return bind(el('input', { type: 'text', spellcheck: 'false', placeholder: kind }), condition, 'value');
  const input = el('input', { type: 'datetime-local' });
  input.value = localTime(condition.value);
  input.addEventListener('input', () => {
    condition.value = String(unixTime(input.value) ?? '');
  });
  return input;
}

/** One condition: its type (a new type starts blank), the parameter for the query types, its value, and Remove. */
function conditionRow(condition, id, n, { retype, remove, only }) {
  const [, valueLabel, kind] = TYPES[condition.type];
  const picker = el('select', {}, ...Object.entries(TYPES).map(([value, [text]]) => el('option', { value, textContent: text })));
  picker.value = condition.type;
  picker.addEventListener('change', () => retype(picker.value));
  const parts = [field(`${id}-type`, 'Condition', picker)];
  if (hasKey(condition.type)) parts.push(field(`${id}-key`, 'Parameter', bind(el('input', { type: 'text', spellcheck: 'false' }), condition, 'key')));
  if (valueLabel) parts.push(field(`${id}-value`, valueLabel, valueInput(condition, kind)));
  // A rule holds at least one condition: its last one is not removed.
  parts.push(button(`${id}-remove`, 'Remove condition', only, remove));
  return el('div', { className: 'fields condition', role: 'group', 'aria-label': `Condition ${n}` }, ...parts);
}

const swap = (list, i, j) => {
  [list[i], list[j]] = [list[j], list[i]];
};

/** Rule `i`: its URL, its conditions, and the buttons that add a condition, move it and remove it; `redraw(id)` focuses `id` after. */
function ruleBox(rules, i, base, redraw) {
  const rule = rules[i];
  const id = `${base}-r${i}`;
  const last = rules.length - 1;
  const conditions = rule.conditions.map((condition, j) =>
    conditionRow(condition, `${id}-c${j}`, j + 1, {
      retype: (type) => {
        rule.conditions[j] = blank(type);
        redraw(`${id}-c${j}-type`);
      },
      remove: () => {
        rule.conditions.splice(j, 1);
        redraw(`${id}-add`);
      },
      only: rule.conditions.length === 1,
    }),
  );
  // A moved rule keeps the focus: on the same button, or the other one once at the end of the list.
  const move = (to) => () => {
    swap(rules, i, to);
    const same = to < i ? to > 0 : to < last;
    redraw(`${base}-r${to}-${(to < i) === same ? 'up' : 'down'}`);
  };
  const buttons = [
    button(`${id}-add`, 'Add a condition', rule.conditions.length >= MAX_CONDITIONS, () => {
      rule.conditions.push(blank('device'));
      redraw(`${id}-c${rule.conditions.length - 1}-type`);
    }),
    button(`${id}-up`, 'Move up', i === 0, move(i - 1)),
    button(`${id}-down`, 'Move down', i === last, move(i + 1)),
    button(`${id}-remove`, 'Remove rule', false, () => {
      rules.splice(i, 1);
      redraw(`${base}-add-rule`);
    }),
  ];
  const url = bind(el('input', { type: 'url', spellcheck: 'false' }), rule, 'url');
  return el(
    'fieldset',
    { className: 'rule' },
    el('legend', { textContent: `Rule ${i + 1}` }),
    el('div', { className: 'fields' }, field(`${id}-url`, 'URL', url, '', 'field wide')),
    ...conditions,
    el('div', { className: 'row wrap' }, ...buttons),
  );
}

/** The rules as the API has them, each condition's fields in one order (a stored record may list them in another). */
const plainRules = (rules = []) =>
  rules.map(({ url, conditions }) => ({ url, conditions: conditions.map(({ type, key, value }) => ({ type, key: key ?? null, value })) }));

/** The rules' list and its Add a rule; `changes()` gives `rules` when they changed, with their URLs completed. */
function rulesPart(record, base) {
  const rules = plainRules(record.rules);
  const initial = JSON.stringify(rules);
  const list = el('div', {});
  const add = button(`${base}-add-rule`, 'Add a rule', false, () => {
    rules.push({ url: '', conditions: [blank('device')] });
    redraw(`${base}-r${rules.length - 1}-url`);
  });
  function redraw(focus) {
    list.replaceChildren(...rules.map((_, i) => ruleBox(rules, i, base, redraw)));
    add.disabled = rules.length >= MAX_RULES;
    if (focus) document.getElementById(focus)?.focus();
  }
  redraw();
  function changes() {
    for (const [i, rule] of rules.entries()) {
      const typed = rule.url.trim();
      if (!typed) throw new Error(`Enter the URL of rule ${i + 1}.`);
      rule.url = withScheme(typed);
      document.getElementById(`${base}-r${i}-url`).value = rule.url;
    }
    return JSON.stringify(rules) === initial ? {} : { rules };
  }
  return { used: rules.length > 0, nodes: [list, el('div', { className: 'row' }, add)], changes };
}

/** The fields after the rules; `changes()` gives those changed (an emptied one as `null`). */
function settingsPart(record, base) {
  const [forward, forwardField] = check(`${base}-forward`, 'Forward the query string', record.forward_query);
  const since = el('input', { type: 'datetime-local', value: localTime(record.valid_since) });
  const until = el('input', { type: 'datetime-local', value: localTime(record.valid_until) });
  const fallback = el('input', { type: 'url', spellcheck: 'false', placeholder: 'none', value: record.fallback_url ?? '' });
  const password = el('input', { type: 'password', autocomplete: 'new-password' });
  const locked = record.password_protected === true;
  const [remove, removeField] = check(`${base}-nopass`, 'Remove the password', false);
  remove.addEventListener('change', () => {
    password.disabled = remove.checked;
  });
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const fields = el(
    'div',
    { className: 'fields' },
    forwardField,
    field(`${base}-since`, 'Valid from', since, 'Empty: no start. Before it the link is not found.'),
    field(`${base}-until`, 'Valid until', until, `Empty: no end. Both in your time zone (${zone}).`),
    field(`${base}-fallback`, 'Fallback URL', fallback, 'Where visits go past the end, the expiry or the visit limit. Empty: none.', 'field wide'),
    field(`${base}-password`, 'Set a new password', password, `8 to 128 characters. Empty: ${locked ? 'keep the current one' : 'none'}.`),
    ...(locked ? [removeField] : []),
  );
  // The default value and state are the record's: a field left as it was is not sent.
  function changes() {
    const body = {};
    if (forward.checked !== forward.defaultChecked) body.forward_query = forward.checked;
    if (since.value !== since.defaultValue) body.valid_since = unixTime(since.value);
    if (until.value !== until.defaultValue) body.valid_until = unixTime(until.value);
    if (fallback.value !== fallback.defaultValue) {
      const typed = fallback.value.trim();
      fallback.value = typed && withScheme(typed);
      body.fallback_url = fallback.value || null;
    }
    if (remove.checked) body.password = null;
    else if (password.value) body.password = password.value;
    return body;
  }
  const used = record.forward_query || locked || record.valid_since != null || record.valid_until != null || record.fallback_url;
  return { used, nodes: [fields], changes };
}

/**
 * The section "Where it sends visitors" of the edit form of `record` (`slug` makes its ids unique),
 * open when the link has any of it, so what it does is in sight; `changes()` gives the fields of
 * the `PATCH` that changed, and throws a sentence when a rule has no URL.
 */
export function routingSection(record, slug) {
  const base = `edit-route-${slug}`;
  const parts = [rulesPart(record, base), settingsPart(record, base)];
  const section = el(
    'details',
    { className: 'routing', ...(parts.some((part) => part.used) ? { open: '' } : {}) },
    el('summary', { textContent: 'Where it sends visitors' }),
    el('p', { className: 'hint', textContent: 'A visitor goes to the URL of the first rule whose conditions all hold; with none, to the target.' }),
    ...parts.flatMap((part) => part.nodes),
  );
  return { section, changes: () => Object.assign({}, ...parts.map((part) => part.changes())) };
}

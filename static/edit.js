// A link's edit form (docs/ui.md, your links), opened under its row: every field filled from the
// record, sent whole as one `PATCH` to the link on its domain (an emptied field clears its value),
// with the changes of where it sends visitors (routing.js).

import { api, linkPath, problem } from './api.js';
import { el, pending, showError } from './dom.js';
import { formReason, numberField, tagList, withScheme } from './input.js';
import { formatDate, linkName } from './records.js';
import { routingSection } from './routing.js';

/** The form's fields: key (in the id), label, the input's attributes, its value from the record, its hint. */
const EDIT_FIELDS = [
  ['url', 'Target', { type: 'url', spellcheck: 'false' }, (r) => r.original_url],
  [
    'days',
    'Keep for (days)',
    { type: 'number', min: '0', max: '36500', step: '1', inputmode: 'numeric', placeholder: 'forever' },
    (r) => (r.retention_days ? String(r.retention_days) : ''),
    (r) => `Counted from ${formatDate(r.created_at)}. Empty or 0: forever.`,
  ],
  [
    'limit',
    'Visit limit',
    { type: 'number', min: '1', step: '1', inputmode: 'numeric', placeholder: 'unlimited' },
    (r) => (r.max_visits == null ? '' : String(r.max_visits)),
    () => 'Empty: unlimited.',
  ],
  ['title', 'Title', { type: 'text', autocomplete: 'off', placeholder: 'none' }, (r) => r.title ?? ''],
  [
    'tags',
    'Tags',
    { type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: 'none' },
    (r) => (r.tags ?? []).join(', '),
    () => 'Separated by commas. Empty: none.',
  ],
];

function field(id, labelText, input, hint) {
  // The target is a URL, often long: it has the form's whole width.
  const wrap = el('div', { className: input.type === 'url' ? 'field wide' : 'field' }, el('label', { for: id, textContent: labelText }), input);
  if (hint) wrap.append(el('p', { className: 'hint', id: `${id}-help`, textContent: hint }));
  return wrap;
}

/** What the form says, as the body of the `PATCH`: every field, the empty ones as "none". */
function editBody(inputs) {
  return {
    url: inputs.url.value,
    retention_days: numberField(inputs.days) ?? 0,
    max_visits: numberField(inputs.limit) ?? null,
    title: inputs.title.value.trim() || null,
    tags: tagList(inputs.tags.value),
  };
}

/** The edit form of `record`; `cancel` closes it, `saved` runs once the service took the change. */
export function editForm(record, { cancel, saved }) {
  const code = linkName(record.short_code, record.domain);
  // Unique on the page: the same code may be on two domains (`@` is in neither a code nor a host).
  const slug = record.domain ? `${record.short_code}@${record.domain}` : record.short_code;
  const errorId = `edit-error-${slug}`;
  const inputs = {};
  const fields = EDIT_FIELDS.map(([key, label, attributes, value, hint]) => {
    const id = `edit-${key}-${slug}`;
    const help = hint?.(record);
    const input = el('input', { id, ...attributes, 'aria-describedby': help ? `${id}-help ${errorId}` : errorId });
    input.value = value(record);
    inputs[key] = input;
    return field(id, label, input, help);
  });
  const routing = routingSection(record, slug);
  const error = el('p', { className: 'error', id: errorId, role: 'alert', hidden: true });
  const save = el('button', { type: 'submit', textContent: 'Save' });
  const cancelButton = el('button', { type: 'button', className: 'secondary', textContent: 'Cancel' });
  const form = el(
    'form',
    { className: 'edit-form', novalidate: '', 'aria-label': `Edit ${code}` },
    el('div', { className: 'fields' }, ...fields),
    routing.section,
    error,
    el('div', { className: 'row wrap' }, save, cancelButton),
  );
  cancelButton.addEventListener('click', cancel);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    showError(error, '');
    const typed = inputs.url.value.trim();
    if (!typed) return showError(error, 'Enter the target URL.');
    inputs.url.value = withScheme(typed);
    let body;
    try {
      body = { ...editBody(inputs), ...routing.changes() };
    } catch (err) {
      return showError(error, err.message);
    }
    void pending(save, async () => {
      try {
        const res = await api(linkPath(record.short_code, record.domain), {
          method: 'PATCH',
          admin: true,
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        });
        if (res.status === 404) throw new Error('This link no longer exists (deleted, or expired).');
        if (!res.ok) {
          const { field, message } = await problem(res);
          throw new Error(formReason(field, message));
        }
        await saved();
      } catch (err) {
        showError(error, err.message);
      }
    });
  });
  return form;
}

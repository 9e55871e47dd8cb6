// What a person types, as the API takes it: a URL without its scheme, a list of tags, an optional
// number; and a reason of the API said in the form's terms. The API judges the values; these only
// read them.

/**
 * A bare `example.com` gets `https://` (in the UI only: the API stays strict). Anything with a
 * scheme is left alone, so `ftp://…` still reaches the API and its reason; `host:8080/…` is a
 * host with a port, not a scheme.
 */
export function withScheme(input) {
  if (/^[a-z][a-z0-9+.-]*:(?!\d)/i.test(input)) return input;
  if (input.startsWith('//')) return `https:${input}`;
  return `https://${input}`;
}

/** Tags typed as text: separated by commas, trimmed, the empty ones dropped (the API sorts them). */
export function tagList(text) {
  return text
    .split(',')
    .map((tag) => tag.trim())
    .filter((tag) => tag !== '');
}

/** An optional number field: absent when empty, else the number typed (the API judges it). */
export function numberField(input) {
  const text = input.value.trim();
  return text === '' ? undefined : Number(text);
}

/**
 * The API's reason about `field`, as the form says it. The API tells a JSON client that `null`
 * means no visit limit; in the form that is an empty field, so the form says so in its own words.
 */
export function formReason(field, message) {
  const most = field === 'max_visits' ? /from 1 to (\d+)/.exec(message)?.[1] : undefined;
  return most ? `Visit limit: a whole number from 1 to ${most}, or empty for no limit.` : message;
}

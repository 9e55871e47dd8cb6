// What a person types, as the API takes it: a URL without its scheme, a list of tags, an optional
// number. The API judges the values; these only read them.

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

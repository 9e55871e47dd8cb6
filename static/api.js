// Talking to the API: the gate token on every request, a 401 turned into the token prompt and a
// retry, the admin key, and the API's `detail` turned into a sentence for a person. Every URL is
// relative, so the page works the same at `/` and under a base path (`/s/`).

export const TOKEN_KEY = 'url-shortener.token';
export const API_KEY_KEY = 'url-shortener.api-key';

/** Set by the page: shows the token prompt and resolves once a working token is stored. */
let askToken = async () => {
  throw new Error('This service needs an access token.');
};

export function onTokenNeeded(ask) {
  askToken = ask;
}

/**
 * A request with the token (when there is one). A `401` means the token is missing or no longer
 * works: the prompt opens, and the same request is sent again once a token is accepted, so what
 * the person was doing simply completes.
 */
export async function api(path, { method = 'GET', headers = {}, body, admin = false } = {}) {
  for (;;) {
    const all = { ...headers };
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) all.Authorization = `Bearer ${token}`;
    if (admin) all['X-API-Key'] = sessionStorage.getItem(API_KEY_KEY) ?? '';
    let res;
    try {
      res = await fetch(path, { method, headers: all, body, cache: 'no-store' });
    } catch {
      throw new Error('The service could not be reached. Check your connection and try again.');
    }
    if (res.status !== 401) return res;
    sessionStorage.removeItem(TOKEN_KEY);
    await askToken(token ? 'That token was not accepted. Enter it again.' : 'This service needs an access token.');
  }
}

/**
 * A link's path in the API, `api/urls/<code>` and `rest` (`/qr`, `/stats`…), on its domain: a
 * link of another domain than the default one is named with `?domain=<host>` (absent: the default).
 */
export function linkPath(code, domain, rest = '', params = {}) {
  const query = new URLSearchParams(params);
  if (domain) query.set('domain', domain);
  const text = String(query);
  return `api/urls/${encodeURIComponent(code)}${rest}${text ? `?${text}` : ''}`;
}

// The first word of a `detail` names the input it is about (docs/api.md); people read words.
const FIELD_NAMES = [
  [/^url\b/, 'The URL'],
  [/^retention_days\b/, 'The number of days'],
  [/^max_visits\b/, 'The visit limit'],
  [/^code\b/, 'The code'],
  [/^limit\b/, 'The page size'],
  [/^offset\b/, 'The page'],
  [/^q\b/, 'The search'],
  [/^title\b/, 'The title'],
  [/^tags\b/, 'The tags'],
  [/^domain\b/, 'The domain'],
  // Where a link sends visitors: a place in its rules as the edit form numbers them ("Rule 2, condition 1: …").
  [
    /^rules\[(\d+)\](?:\.conditions\[(\d+)\])?(?:\.(url|key)|\.\w+)?: (?:url )?/,
    (_, rule, condition, part) =>
      `Rule ${Number(rule) + 1}${condition ? `, condition ${Number(condition) + 1}` : ''}${part ? `, ${part === 'url' ? 'URL' : 'parameter'}` : ''}: `,
  ],
  [/^fallback_url: url\b/, 'Fallback URL:'],
  [/valid_since/g, '“Valid from”'],
  [/valid_until/g, '“Valid until”'],
  [/^password\b/, 'The password'],
];

/** The input a `detail` is about, by its first words (tags: "a tag …", "a link may have at most 20 distinct tags"). */
const FIELDS = [
  [/^(url|retention_days|max_visits|code|title|tags|domain)\b/, (m) => m[1]],
  [/^(a tag\b|a link may have at most \d+ distinct tags)/, () => 'tags'],
];

/** What failed, as a sentence, and the input it is about (`url`, `code`, … or undefined). */
export async function problem(res) {
  let detail = '';
  try {
    detail = (await res.json()).detail ?? '';
  } catch {
    // an empty or non-JSON body: fall back to the status below
  }
  if (res.status === 409) return { field: 'code', message: 'That code is already in use. Choose another.' };
  if (!detail) {
    const message =
      res.status === 404
        ? 'Nothing found.'
        : res.status === 403
          ? 'That API key was not accepted. Check it and try again.'
          : res.status === 503
            ? 'The service cannot store links right now. Try again in a moment.'
            : `The request failed (${res.status}).`;
    return { field: undefined, message };
  }
  let field;
  for (const [pattern, name] of FIELDS) {
    const m = pattern.exec(detail);
    if (m) {
      field = name(m);
      break;
    }
  }
  let text = detail;
  for (const [pattern, words] of FIELD_NAMES) text = text.replace(pattern, words);
  const sentence = text.charAt(0).toUpperCase() + text.slice(1);
  return { field, message: /[.!?)]$/.test(sentence) ? sentence : `${sentence}.` };
}

/**
 * An admin view's key (the keys, domains and webhooks views): `askKey(message)` hides the view's
 * `<view>-body` and shows its form `<view>-key-form` with `message` (`before` runs first);
 * `withKey(path, options)` is a request with the kept admin key, or undefined once the key was
 * refused: an empty `403` is a key not accepted, one with a `detail` a key whose role may not do
 * it (said as it is), and the form asks for another.
 */
export function adminKey(view, before = () => undefined) {
  const byId = (suffix) => document.getElementById(`${view}-${suffix}`);
  function askKey(message) {
    before();
    byId('body').hidden = true;
    byId('key-form').hidden = false;
    const error = byId('key-error');
    error.textContent = message;
    error.hidden = !message;
    byId('key').value = '';
    byId('key').focus();
  }
  async function withKey(path, options = {}) {
    const res = await api(path, { ...options, admin: true });
    if (res.status !== 403) return res;
    askKey((await problem(res)).message);
    return undefined;
  }
  return { askKey, withKey };
}

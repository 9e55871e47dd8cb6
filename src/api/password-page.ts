/**
 * The page of a password-protected link (docs/api.md, password-protected links): `GET /<code>`
 * answers it with `200`, a wrong password with `401`, too many wrong ones with `429`. One form and
 * one field, in the look of the other pages of a link (respond.ts `htmlPage`): the same card, the
 * UI's stylesheet and its controls' stylesheet for the field and the button, no script and no
 * inline style (the Content-Security-Policy allows neither), so it works without JavaScript.
 *
 * It names no target, by construction: it is given none. A preview fetcher gets it too.
 *
 * The form has no `action`: a browser then posts to the page's own URL, so it posts back to
 * `<code>` or `<code>/` under any base path, with the page's query string kept, so a link that
 * forwards its query (`forward_query`) or chooses its target by it (a `query-param` rule) sends the
 * visitor where the same link without a password would. `form-action 'self'` allows it.
 */
import { escapeHtml, htmlPage } from '../http/respond.ts';

export interface PasswordPageOptions {
  /** The last password sent was wrong (`401`). */
  wrong?: boolean;
  /** Too many wrong passwords: the seconds until the next may be tried (`429`). Wins over `wrong`. */
  retryAfter?: number;
  /** Link to the home page (the UI): only when it is served. */
  home: boolean;
  /** Prefix of the service's root relative to the page (`''`, or `'../'` under a trailing slash). */
  root: string;
}

const TITLE = 'This link is protected';
const MESSAGE = 'Its owner gave it a password. Enter the password to open the link.';
const FIELD = 'password';
const ERROR = 'password-error';

/** The error under the field, when there is one, and whether it says the password was wrong. */
function errorOf({ wrong = false, retryAfter }: PasswordPageOptions): { text: string; invalid: boolean } | undefined {
  if (retryAfter !== undefined) {
    const seconds = retryAfter === 1 ? '1 second' : `${retryAfter} seconds`;
    // Not `aria-invalid`: the password sent was not checked, so it is not known to be wrong.
    return { text: `Too many wrong passwords. Try again in ${seconds}.`, invalid: false };
  }
  return wrong ? { text: 'Wrong password. Try again.', invalid: true } : undefined;
}

/**
 * The form: a labelled password field and its button. An error is tied to the field
 * (`aria-describedby`) and announced when the page loads (`role="alert"`), so a screen reader says
 * it as it says the field.
 */
function form(options: PasswordPageOptions): string {
  const error = errorOf(options);
  const described = error === undefined ? '' : ` aria-describedby="${ERROR}"${error.invalid ? ' aria-invalid="true"' : ''}`;
  return (
    '<form method="post">\n' +
    `<label for="${FIELD}">Password</label>\n` +
    `<input type="password" name="password" id="${FIELD}" autocomplete="current-password" required${described}>\n` +
    (error === undefined ? '' : `<p class="error" id="${ERROR}" role="alert">${escapeHtml(error.text)}</p>\n`) +
    '<p><button type="submit">Open the link</button></p>\n' +
    '</form>\n'
  );
}

/** The whole page: a page of a link (`htmlPage`) with the form in its card and the controls' stylesheet. */
export function passwordPage(options: PasswordPageOptions): string {
  return htmlPage(TITLE, MESSAGE, { home: options.home, root: options.root, body: form(options), stylesheets: ['controls.css'] });
}

/**
 * The `password` field of a form body (`application/x-www-form-urlencoded`: `+` is a space, then
 * percent-decoding, as browsers encode it); the first one when the body repeats it, `''` when it is
 * there but empty, undefined when absent. A value whose encoding is malformed (a stray `%`, bytes
 * that are not UTF-8) is undefined too, never a throw and never a guess at what was meant. The
 * values of other fields are never decoded, so a malformed one does not matter.
 */
export function passwordFromForm(body: string): string | undefined {
  for (const pair of body.split('&')) {
    const eq = pair.indexOf('=');
    const name = decodeField(eq === -1 ? pair : pair.slice(0, eq));
    if (name !== 'password') continue;
    return eq === -1 ? '' : decodeField(pair.slice(eq + 1));
  }
  return undefined;
}

function decodeField(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

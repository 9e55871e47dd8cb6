// The gate (docs/ui.md): whether the service asks for a token, the prompt that asks for it, and
// whether short links open without it. The token lives in sessionStorage: it lasts as long as the
// tab and goes nowhere else.

import { TOKEN_KEY, onTokenNeeded, problem } from './api.js';
import { $, pending, showError } from './dom.js';

/** Whether a token is required (`/auth-check`), and whether short links open without it. */
const gateState = { required: false, linksPrivate: undefined };

/** The requests that met a `401`, waiting for a token to be accepted to be sent again. */
let tokenWaiters = [];

function showGate(message) {
  $('gate').hidden = false;
  $('app').hidden = true;
  // The views' links lead nowhere until a token is accepted.
  $('views').hidden = true;
  $('forget-token').hidden = true;
  showError($('gate-error'), message ?? '');
  $('token').value = '';
  $('token').focus();
}

function hideGate() {
  $('gate').hidden = true;
  $('app').hidden = false;
  $('views').hidden = false;
  $('forget-token').hidden = !sessionStorage.getItem(TOKEN_KEY);
}

/** Asks `/auth-check` whether a token is needed, and shows the prompt or the page. */
export async function checkGate() {
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

/**
 * Whether short links open without the token. Asked once, by a `HEAD` of a real short link sent
 * without it: `401` means private (gate on, public redirects off), anything else public. A `HEAD`
 * never counts a visit. A short link on another origin (a `BASE_URL` elsewhere) is not asked.
 */
export async function probeLinks(shortUrl) {
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

/** The prompt answers every `401` of `api`; the form stores a token once the service accepts it. */
export function startGate() {
  onTokenNeeded(
    (message) =>
      new Promise((resolve) => {
        tokenWaiters.push(resolve);
        showGate(message);
      }),
  );

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
}

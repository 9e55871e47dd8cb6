// DOM helpers the parts of the page share: find and make elements, show an error, a button that
// waits on the network, a download, a link, the clipboard. Nothing here talks to the API.

export const $ = (id) => document.getElementById(id);

/** An element with properties (`className`, `textContent`, `type`, `id`, `hidden`), attributes and children. */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (name === 'className' || name === 'textContent' || name === 'type' || name === 'id' || name === 'hidden') node[name] = value;
    else node.setAttribute(name, value);
  }
  node.append(...children);
  return node;
}

/** A link that sends no referrer to the page it opens. */
export function link(href, text = href) {
  const a = document.createElement('a');
  a.href = href;
  a.textContent = text;
  a.rel = 'noreferrer';
  return a;
}

export function showError(el, message) {
  el.textContent = message;
  el.hidden = !message;
}

/**
 * Runs `work` with `button` showing that it waits on the network: disabled, `aria-busy`, a
 * spinner from the stylesheet. Focus comes back to the button if it had it.
 */
export async function pending(button, work) {
  const focused = document.activeElement === button;
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  button.classList.add('busy');
  try {
    return await work();
  } finally {
    button.disabled = false;
    button.removeAttribute('aria-busy');
    button.classList.remove('busy');
    if (focused && document.activeElement === document.body) button.focus();
  }
}

/**
 * Saves the body of `res` as a file under the name its `Content-Disposition` gives (else
 * `fallback`). Fetched, not linked: a download link could not carry the token or the key.
 */
export async function saveDownload(res, fallback) {
  const name = /filename="([^"]+)"/.exec(res.headers.get('Content-Disposition') ?? '')?.[1] ?? fallback;
  const href = URL.createObjectURL(await res.blob());
  const a = el('a', { href, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(href), 60_000);
}

/** Whether `text` reached the clipboard (the browser may refuse: then the person copies by hand). */
export async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

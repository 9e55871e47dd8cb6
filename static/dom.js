// DOM helpers the parts of the page share: find and make elements, an icon, show an error, a button
// that waits on the network, a download, a link, the clipboard. Nothing here talks to the API.

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

/**
 * The icons of the row actions, as the strokes of a 16 px square. Drawn with `currentColor`, so
 * they take the button's colour in light and dark; the button carries the name a screen reader
 * says, the icon is hidden from it.
 */
const ICONS = {
  stats: 'M2 14h12M4.5 11.5V8M8 11.5V3.5M11.5 11.5V6',
  copy: 'M5.5 5.5h8v8h-8zM10.5 3V2.5h-8v8H3',
  qr: 'M2.5 2.5h4v4h-4zM9.5 2.5h4v4h-4zM2.5 9.5h4v4h-4zM9.5 9.5h1.5M13.5 9.5v1.5M9.5 13.5h4M11.5 11.5v2',
  edit: 'M10.5 2.5l3 3-8 8h-3v-3zM8.5 4.5l3 3',
  delete: 'M2.5 4.5h11M6 4.5V2.5h4v2M4 4.5l.75 9h6.5l.75-9M6.75 7v4M9.25 7v4',
  done: 'M3 8.5l3.25 3.25L13 5',
};

export function icon(name) {
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  const path = document.createElementNS('http://www.w3.org/2000/svg', 'path');
  path.setAttribute('d', ICONS[name]);
  for (const [attribute, value] of Object.entries({
    viewBox: '0 0 16 16',
    width: '16',
    height: '16',
    fill: 'none',
    stroke: 'currentColor',
    'stroke-width': '1.5',
    'stroke-linecap': 'round',
    'stroke-linejoin': 'round',
    'aria-hidden': 'true',
    focusable: 'false',
  }))
    svg.setAttribute(attribute, value);
  svg.append(path);
  return svg;
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
 * A secret shown this once (a key's, a webhook's) in `<prefix>-made`, under `title`: the copy
 * button `<prefix>-copy` gets the focus, so Enter copies. Without a secret, it leaves the page
 * (after another create, and whenever the view is left).
 */
export function showOnce(prefix, title = '', secret = '') {
  const field = $(`${prefix}-secret`);
  if (field instanceof HTMLInputElement) field.value = secret;
  else field.textContent = secret;
  $(`${prefix}-made-title`).textContent = title;
  $(`${prefix}-copy-status`).textContent = '';
  $(`${prefix}-made`).hidden = secret === '';
  if (secret !== '') $(`${prefix}-copy`).focus();
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

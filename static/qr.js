// A link's QR code in the page: fetched with the token, then kept only as far as it is an SVG of
// shapes.

import { api, linkPath, problem } from './api.js';

const SVG_NS = 'http://www.w3.org/2000/svg';
const SVG_ALLOWED = new Set(['svg', 'rect', 'path', 'g', 'title']);

/**
 * The QR code's SVG as a node of this document. Fetched with the token (an `<img src>` cannot
 * send it), parsed as XML, kept only if it is an SVG of shapes: no script, no link, no handler
 * attribute ever reaches the page, whatever the answer held.
 */
function parseSvg(text, label) {
  const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
  const root = doc.documentElement;
  if (root.namespaceURI !== SVG_NS || root.localName !== 'svg' || doc.getElementsByTagName('parsererror').length > 0) {
    throw new Error('The QR code could not be read.');
  }
  for (const el of [root, ...root.querySelectorAll('*')]) {
    if (!SVG_ALLOWED.has(el.localName) || el.namespaceURI !== SVG_NS) {
      el.remove();
      continue;
    }
    for (const attr of [...el.attributes]) {
      if (/^on|href$/i.test(attr.localName) || attr.localName === 'style') el.removeAttribute(attr.name);
    }
  }
  const svg = document.importNode(root, true);
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', label);
  svg.setAttribute('focusable', 'false');
  return svg;
}

/** The QR code of `record` (on its domain), fetched with the token and inserted as SVG nodes into `box`. */
export async function showQr(record, box) {
  const res = await api(linkPath(record.short_code, record.domain, '/qr'));
  if (!res.ok) throw new Error((await problem(res)).message);
  box.replaceChildren(parseSvg(await res.text(), `QR code of ${record.short_url}`));
  box.hidden = false;
}

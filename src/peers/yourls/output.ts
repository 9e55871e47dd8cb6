/**
 * YOURLS' four output formats (docs/compat.md#yourls-api), as its `yourls_api_output` writes them:
 * the status comes from the result's `statusCode`, else its `errorCode`, else 200; `json` is PHP's
 * `json_encode` (slashes and every non-ASCII character escaped), `jsonp` wraps it in the callback,
 * `xml` is the document its array-to-XML converter makes (`<root>`, one element per key, in
 * order), and `simple` — also what any unknown format gets — is the result's plain-text line.
 * Pure: a result in, a status, a content type and a body out.
 */

/** A value of a YOURLS result: PHP arrays with string keys, in insertion order. */
export type YourlsValue = string | number | null | YourlsFields;
export interface YourlsFields {
  readonly [key: string]: YourlsValue;
}

/** An API answer before its format: the fields, and the line `format=simple` shows. */
export interface YourlsResult {
  fields: YourlsFields;
  simple?: string;
  /** Headers the answer carries besides the usual ones (a 429's `Retry-After`), whatever the format. */
  headers?: readonly HeaderPair[];
}

import type { HeaderPair } from '../../http/headers.ts';

export interface Rendered {
  status: number;
  type: string;
  body: string;
}

const TYPES = {
  json: 'application/json; charset=utf-8',
  jsonp: 'application/javascript; charset=utf-8',
  xml: 'application/xml; charset=utf-8',
  simple: 'text/plain; charset=utf-8',
} as const;

/** A JSONP callback: a JavaScript name, dotted paths allowed, nothing that could end the call. */
export const CALLBACK = /^[A-Za-z_$][\w$.]{0,63}$/;

/** YOURLS' answer to a JSONP request whose callback it will not write. */
const BAD_CALLBACK: YourlsFields = { errorCode: '400', error: 'Invalid callback parameter' };

/** `statusCode`, else `errorCode`, else 200: YOURLS reads the status from the result itself. */
export function statusOf(fields: YourlsFields): number {
  const code = fields['statusCode'] ?? fields['errorCode'];
  return code === undefined ? 200 : Number(code);
}

export function render(format: string, result: YourlsResult): Rendered {
  const status = statusOf(result.fields);
  switch (format) {
    case 'json':
      return { status, type: TYPES.json, body: phpJson(result.fields) };
    case 'jsonp': {
      const callback = result.fields['callback'];
      if (typeof callback !== 'string' || !CALLBACK.test(callback)) return { status: 400, type: TYPES.jsonp, body: phpJson(BAD_CALLBACK) };
      return { status, type: TYPES.jsonp, body: `${callback}(${phpJson(result.fields)})` };
    }
    case 'xml':
      return { status, type: TYPES.xml, body: phpXml(result.fields) };
    default:
      return { status, type: TYPES.simple, body: result.simple ?? '' };
  }
}

/**
 * JSON as PHP's `json_encode` writes it with no flags: `/` as `\/` and every character past ASCII
 * as `\uXXXX` (lower-case hex; a character past U+FFFF as its surrogate pair). JSON.stringify has
 * escaped the control characters the same way already, and `/` appears only inside strings.
 */
export function phpJson(value: YourlsValue): string {
  return JSON.stringify(value).replace(/[/\u0080-\uffff]/g, (c) => (c === '/' ? '\\/' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}

/** The XML document: the declaration, `<root>` holding one element per field, a final newline. */
export function phpXml(fields: YourlsFields): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<root>${elements(fields)}</root>\n`;
}

function elements(fields: YourlsFields): string {
  let xml = '';
  for (const [key, value] of Object.entries(fields)) {
    const content = value !== null && typeof value === 'object' ? elements(value) : xmlText(value === null ? '' : String(value));
    // An element with no content is written empty, as libxml2 serializes it.
    xml += content === '' ? `<${key}/>` : `<${key}>${content}</${key}>`;
  }
  return xml;
}

/**
 * Characters text content may not hold: the control characters the converter removes (tab and
 * DEL too; line feed and carriage return kept), and the other characters XML 1.0 forbids even as
 * a reference — a UTF-16 surrogate without its pair (the `u` flag matches only those), U+FFFE and
 * U+FFFF. A title may hold any of them, and one such title would make the whole `stats` document
 * unreadable to every client.
 */
const NOT_XML = /[\x00-\x09\x0b\x0c\x0e-\x1f\x7f\uD800-\uDFFF\uFFFE\uFFFF]/gu;

/**
 * Text content: the characters of `NOT_XML` are dropped, then `&`, `<`, `>` and the carriage
 * return are escaped as libxml2 escapes text. Quotes need no escape outside attributes.
 */
export function xmlText(text: string): string {
  return text.replace(NOT_XML, '').replace(/[&<>\r]/g, (c) => XML_ESCAPES[c]!);
}

const XML_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '\r': '&#13;' };

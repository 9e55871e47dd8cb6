/**
 * A strict reader of the XML documents YOURLS' API writes (docs/compat.md#yourls-api), for tests:
 * the declaration, one root element, elements that hold either text or other elements, the five
 * predefined entities and character references. Anything else — an attribute, a comment, mixed
 * content, a tag left open, a stray `<` or `&`, a character XML 1.0 forbids (a C0 control but tab,
 * line feed and carriage return, a lone surrogate, U+FFFE, U+FFFF), written or referenced —
 * throws, so a test fails on a malformed answer.
 */

/** An element's content: its text, or its child elements in order as [name, content] pairs. */
export type XmlContent = string | XmlEntry[];
export type XmlEntry = [name: string, content: XmlContent];

const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';
const NAME = /^[A-Za-z_][\w.-]*/;
const ENTITIES: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
/** Anything but XML 1.0's `Char`: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]. */
const NOT_CHAR = /[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

function assertChars(text: string, where: string): void {
  const found = NOT_CHAR.exec(text);
  if (found !== null)
    throw new Error(`U+${found[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} is no XML character, ${where} at ${found.index}`);
}

/** The document's root element, as [name, content]. */
export function readXml(doc: string): XmlEntry {
  assertChars(doc, 'in the document');
  if (!doc.startsWith(DECLARATION)) throw new Error(`no XML declaration: ${JSON.stringify(doc.slice(0, 60))}`);
  const reader = { text: doc, at: DECLARATION.length };
  const root = element(reader);
  if (doc.slice(reader.at) !== '\n') throw new Error(`after the root element: ${JSON.stringify(doc.slice(reader.at))}`);
  return root;
}

interface Reader {
  text: string;
  at: number;
}

function element(r: Reader): XmlEntry {
  if (r.text[r.at] !== '<') throw new Error(`expected an element at ${r.at}`);
  const name = NAME.exec(r.text.slice(r.at + 1))?.[0];
  if (name === undefined) throw new Error(`bad element name at ${r.at}`);
  r.at += 1 + name.length;
  if (r.text.startsWith('/>', r.at)) {
    r.at += 2;
    return [name, ''];
  }
  if (r.text[r.at] !== '>') throw new Error(`<${name}: attributes or junk at ${r.at}`);
  r.at++;
  const close = `</${name}>`;
  if (r.text[r.at] === '<' && r.text[r.at + 1] !== '/') {
    const children: XmlEntry[] = [];
    while (!r.text.startsWith(close, r.at)) children.push(element(r));
    r.at += close.length;
    return [name, children];
  }
  const end = r.text.indexOf(close, r.at);
  if (end === -1) throw new Error(`<${name}> is never closed`);
  const raw = r.text.slice(r.at, end);
  r.at = end + close.length;
  return [name, decode(raw)];
}

function decode(raw: string): string {
  if (raw.includes('<')) throw new Error(`markup inside text: ${JSON.stringify(raw)}`);
  return raw.replace(/&([^;]*);|&/g, (whole, ref: string | undefined) => {
    if (ref === undefined) throw new Error(`a bare & in ${JSON.stringify(raw)}`);
    if (Object.hasOwn(ENTITIES, ref)) return ENTITIES[ref]!;
    const code = /^#(\d+)$/.exec(ref)?.[1] ?? (/^#x([0-9a-fA-F]+)$/.exec(ref)?.[1] !== undefined ? String(parseInt(ref.slice(2), 16)) : undefined);
    if (code === undefined || Number(code) > 0x10ffff) throw new Error(`unknown entity ${whole}`);
    const char = String.fromCodePoint(Number(code));
    assertChars(char, `referenced by ${whole}`);
    return char;
  });
}

/** A JSON-like value as YOURLS' XML writes it: objects in key order, every scalar as text. */
export function asXml(value: unknown): XmlContent {
  if (value !== null && typeof value === 'object') return Object.entries(value).map(([k, v]): XmlEntry => [k, asXml(v)]);
  return value === null ? '' : String(value);
}

/**
 * What every rule of `links/` answers when it refuses a value, and the one rule every text obeys.
 * Rules return a `Refusal` instead of throwing: a door turns it into its own refusal, and an
 * import checks millions of rows, where a thrown error would cost a stack trace each (that was
 * most of the time of a file of bad rows).
 */

/** Why a value was refused, as a plain value: no stack, nothing thrown. */
export class Refusal {
  constructor(readonly detail: string) {}
}

/**
 * A NUL, or a UTF-16 surrogate without its pair (the `u` flag matches a surrogate only when it is
 * alone). PostgreSQL's `text` cannot hold a NUL, and no UTF-8 text can hold a lone surrogate: the
 * driver and the log's writer would each turn it into U+FFFD, so what was stored or searched for
 * would quietly differ from what was sent.
 */
const UNSTORABLE = /[\0\uD800-\uDFFF]/u;

/**
 * Why `text` cannot be taken as `field` (docs/api.md, "Text every store can hold"), or undefined
 * when it can: the one rule for the text any door hands the service, whatever the store.
 */
export function unstorableText(text: string, field: string): string | undefined {
  const found = UNSTORABLE.exec(text);
  if (found === null) return undefined;
  return found[0] === '\0' ? `${field} must not contain a NUL character` : `${field} must not contain a lone UTF-16 surrogate (it is not Unicode text)`;
}

/** The length of `text` in characters (code points, as docs/api.md counts them), not UTF-16 units. */
export function codePoints(text: string): number {
  let length = 0;
  for (const _ of text) length++;
  return length;
}

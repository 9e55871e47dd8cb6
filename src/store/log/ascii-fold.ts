/**
 * A case-insensitive search in bytes, as `toLowerCase()` would compare ASCII text: the list's `q`
 * over the codes and URLs in the keydir's arena (`Keydir.containsFolded`), with no string made.
 */

/** A-Z folded to a-z; any other byte as it is. */
const fold = (b: number): number => (b >= 0x41 && b <= 0x5a ? b | 0x20 : b);

/**
 * Whether `buf[start, end)`, folded, contains `needle`; undefined as soon as a byte outside ASCII
 * is met (see `Keydir.containsFolded`).
 */
export function foldedIndex(buf: Buffer, start: number, end: number, needle: Uint8Array): boolean | undefined {
  const m = needle.length;
  const first = needle[0]!;
  for (let i = start; i < end; i++) {
    const b = buf[i]!;
    // Lower-casing an ASCII character does not depend on its neighbours: a match is a match.
    if (b >= 0x80) return undefined;
    if (fold(b) !== first || i + m > end) continue;
    let j = 1;
    while (j < m && fold(buf[i + j]!) === needle[j]) j++;
    if (j === m) return true;
  }
  return false;
}

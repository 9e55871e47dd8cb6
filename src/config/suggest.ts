/**
 * "Did you mean …?" for a name that matches nothing known (a library option today), as a pure
 * function: the same letters in another case or with `_`/`-`, else the nearest name by a few edits.
 */

/** Edit distance between two short names: insertions, deletions, substitutions, swaps of neighbours. */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = d[i]!;
      row[j] = Math.min(d[i - 1]![j]! + 1, row[j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The option `name` was probably meant to be: the same letters in another case or with `_`/`-`
 * (`api_keys`, `API_TOKEN` → `apiKeys`, `apiToken`), else the one nearest by up to two edits
 * (`apiKey` → `apiKeys`). Undefined when nothing is close.
 */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const fold = (s: string): string => s.toLowerCase().replace(/[-_]/g, '');
  const folded = fold(name);
  const same = known.find((k) => fold(k) === folded);
  if (same !== undefined) return same;
  let best: string | undefined;
  // Two edits at most, and fewer for a short name, where two edits turn anything into anything.
  let bestDistance = Math.min(2, Math.floor(folded.length / 3));
  for (const k of known) {
    const d = distance(folded, fold(k));
    if (d <= bestDistance && (best === undefined || d < bestDistance)) [best, bestDistance] = [k, d];
  }
  return best;
}

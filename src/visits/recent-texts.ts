/**
 * A function of a header's text behind a cache of the last distinct texts it was asked: the
 * `User-Agent`'s families (user-agent.ts) and the `Referer`'s host (referrer.ts), each asked on
 * every counted visit of values a site sees again and again.
 *
 * When the cache is full the oldest entry goes (a `Map` iterates in insertion order): a hit stays
 * one lookup, with none of the reordering least-recently-used would need on every hit, and a flood
 * of new texts only pushes popular ones out one at a time — each is computed again when next asked
 * and stays — where clearing the whole cache would make every client a miss at once. The texts
 * stay in this process's memory only.
 */

/**
 * Texts longer than this are computed but not remembered: no browser sends one, and the cache's
 * memory stays bounded by its size times this length (4,096 × 1 KB = 4 MB).
 */
export const MAX_REMEMBERED_LENGTH = 1024;

/** `compute` behind a cache of at most `max` (a positive integer) texts; `compute` never answers `undefined`. */
export function rememberRecent<T>(compute: (text: string) => T, max: number): (text: string) => T {
  if (!Number.isInteger(max) || max < 1) throw new RangeError(`cache size must be a positive integer, got ${max}`);
  const cache = new Map<string, T>();
  return function remembered(text) {
    const known = cache.get(text);
    if (known !== undefined) return known;
    const value = compute(text);
    if (text.length <= MAX_REMEMBERED_LENGTH) {
      if (cache.size >= max) cache.delete(cache.keys().next().value!);
      cache.set(text, value);
    }
    return value;
  };
}

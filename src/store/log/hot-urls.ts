/**
 * Redirected URLs kept decoded, by keydir slot: a direct-mapped cache of `HOT_URLS` entries (a power
 * of two), for URLs of at most `HOT_URL_MAX_BYTES` bytes, so at most about 2 MB of strings.
 *
 * Why: a redirect of a popular link would otherwise decode its URL from the arena each time. The
 * allocation is what costs, not the decoding: every young string brings the next scavenge closer,
 * and decoding on every redirect cost about 6 % of the instructions of a whole redirect.
 */
const HOT_URLS = 4096;
export const HOT_URL_MAX_BYTES = 512;
const EMPTY = -1;

export class HotUrls {
  /** The slot each entry belongs to, `EMPTY` when none. */
  private readonly slots = new Int32Array(HOT_URLS).fill(EMPTY);
  private readonly urls: string[] = new Array<string>(HOT_URLS).fill('');

  get(slot: number): string | undefined {
    const i = slot & (HOT_URLS - 1);
    return this.slots[i] === slot ? this.urls[i] : undefined;
  }

  set(slot: number, url: string): void {
    const i = slot & (HOT_URLS - 1);
    this.slots[i] = slot;
    this.urls[i] = url;
  }

  /** A slot gets another record: its old URL must not be served for it. */
  forget(slot: number): void {
    const i = slot & (HOT_URLS - 1);
    if (this.slots[i] === slot) this.slots[i] = EMPTY;
  }

  /** Slots were renumbered (vacuum): no entry is valid any more. */
  clear(): void {
    this.slots.fill(EMPTY);
  }
}

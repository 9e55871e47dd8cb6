/**
 * The request paths `Keydir.findIn` found a code in lately, with what it found: a popular link's
 * path comes again and again, and a `Map` lookup of it (the engine hashes and compares the string
 * natively) costs about a third of reading the code's characters and walking the code columns
 * (docs/performance.md).
 *
 * At most `REMEMBERED_PATHS` (a few hundred KB), all forgotten when one more comes. The paths are
 * read from one place with one alphabet (`start`, `allowed`); asked from another, it forgets them.
 * The keydir forgets them too on any change that could make an answer stale.
 */
const REMEMBERED_PATHS = 4096;

/**
 * What `findIn` found in a path: the code's slot, and the URL to redirect to when that is all a
 * redirect needs (a link with neither a retention nor a visit limit, whose URL is short enough to
 * keep decoded, see `HOT_URL_MAX_BYTES`); null when the caller must read the slot's values.
 */
export interface Found {
  readonly slot: number;
  readonly url: string | null;
}

export class RememberedPaths {
  private readonly found = new Map<string, Found>();
  private start = 0;
  private allowed: Uint8Array | undefined;

  /** What was found in `text`, read from `start` with `allowed`, if it is remembered. */
  get(text: string, start: number, allowed: Uint8Array): Found | undefined {
    if (start !== this.start || allowed !== this.allowed) {
      this.clear();
      this.start = start;
      this.allowed = allowed;
    }
    return this.found.get(text);
  }

  /** Remembers `found` for `text`, read as the last `get` read it. */
  set(text: string, found: Found): void {
    if (this.found.size >= REMEMBERED_PATHS) this.found.clear();
    this.found.set(text, found);
  }

  /** Forgets every path; an empty cache is left alone, as replay removes records by the thousand. */
  clear(): void {
    if (this.found.size !== 0) this.found.clear();
  }
}

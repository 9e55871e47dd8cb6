/**
 * The referrer hosts of the log store's events by number: an event holds the number, and the log
 * writes each number's host once (an `R` entry) before the first event that uses it
 * (link-events.ts).
 */
/** Referrer hosts by number (1, 2, …; 0 is "none"), and which numbers the log has written. */
export class Referrers {
  private readonly numbers = new Map<string, number>();
  private readonly hosts: (string | undefined)[] = [undefined];
  /** Numbers whose `R` entry is durable in the log. */
  private readonly written: boolean[] = [];

  /** The number of `host` (made now if new); 0 for null. */
  numberOf(host: string | null): number {
    if (host === null) return 0;
    let n = this.numbers.get(host);
    if (n === undefined) {
      n = this.hosts.length;
      this.hosts.push(host);
      this.numbers.set(host, n);
    }
    return n;
  }

  /** The host of number `n`, or null. */
  host(n: number): string | null {
    return this.hosts[n] ?? null;
  }

  /** Sets number `n` to `host`, as an `R` entry of the log says. */
  define(n: number, host: string): void {
    while (this.hosts.length <= n) this.hosts.push(undefined);
    this.hosts[n] = host;
    this.numbers.set(host, n);
    this.written[n] = true;
  }

  isWritten(n: number): boolean {
    return n === 0 || this.written[n] === true;
  }

  markWritten(n: number): void {
    this.written[n] = true;
  }

  /**
   * The numbers whose `R` entry is in the log, with their hosts: what a replay of the log knows
   * (the start-up checkpoint keeps these, and `define`s them back).
   */
  *inLog(): Generator<[number, string]> {
    for (const [n, host] of this.entries()) if (this.written[n] === true) yield [n, host];
  }

  /** Every number with its host, for a rewrite of the log. */
  *entries(): Generator<[number, string]> {
    for (let n = 1; n < this.hosts.length; n++) {
      const host = this.hosts[n];
      if (host !== undefined) yield [n, host];
    }
  }

  get size(): number {
    return this.hosts.length - 1;
  }
}

/**
 * What the recorder knows of the clients it saw today: per `User-Agent` text its families and its
 * keyed hash, per address (as the request spelled it) the canonical address, its country and its
 * keyed hash. A returning client's event then costs two `Map` lookups, one per value, instead of
 * one per fact.
 *
 * Why it matters: an event is made between two requests' worth of HTTP work, which leaves the
 * processor's caches cold, and every lookup in a table of thousands of entries is then a few
 * trips to memory. Measured with the redirect mix of docs/performance.md, five lookups (the
 * families, the country, the two hashes, the canonical IPv6 spelling) cost more than all the rest
 * of an event. An IPv4 address in its one spelling, most clients, is kept in a typed array
 * instead (ipv4-facts.ts): one trip to memory, not four.
 *
 * Everything here is in memory only, never written, and forgotten when the UTC day changes: a
 * hash is worth keeping only under the day's key, and no entry outlives its day (visitor-id.ts).
 * Both tables are bounded (`BoundedCache`): a flood of new clients pushes old ones out, each
 * looked up again on its next visit. What does not depend on the day stays cached below them
 * across midnight (the `User-Agent` classifier's cache, the `.mmdb` reader's), so the day's first
 * visits cost an HMAC each, not a classification and a tree walk too.
 */
import type { KeyObject } from 'node:crypto';
import { canonicalAddress } from './client-address.ts';
import { Ipv4Facts, parseIPv4 } from './ipv4-facts.ts';
import { BoundedCache } from './mmdb.ts';
import { countryNumber } from './packed.ts';
import type { UserAgentClass } from './user-agent.ts';
import { addressHash, agentHash } from './visitor-id.ts';

/** Values of each kind remembered for the day: twice this at most (`BoundedCache`). */
const CLIENT_FACTS = 16_384;

/** A `User-Agent`'s facts; `hash` is set once the day's key is at hand. */
interface AgentFacts {
  families: UserAgentClass;
  hash: number | undefined;
}

/** What the recorder reads of an address: its country, and its hash once the day's key is at hand. */
export interface Located {
  readonly country: string | null;
  readonly hash: number | undefined;
}

/** An address's facts; `address` is null when the entry is no address (client-address.ts). */
interface AddressFacts extends Located {
  address: string | null;
  country: string | null;
  /** Whose country it is: a reloaded country database (geoip.ts) asks again. */
  countries: unknown;
  hash: number | undefined;
}

/** Stands for a request without a `User-Agent` (no header value holds a line break). */
const NO_AGENT = '\n';

interface ClientFactsOptions {
  /** The families of a `User-Agent` (user-agent.ts). */
  classify: (ua: string | undefined) => UserAgentClass;
  /** The country of a canonical address (two letters `A`–`Z`), or null. */
  countryOf: (address: string) => string | null;
  /** The country database in use: when it is another one, a country is asked again. */
  countries: () => unknown;
  /** Values of each kind remembered (default `CLIENT_FACTS`). */
  max?: number;
}

export class ClientFacts {
  private day = -1;
  private agents: BoundedCache<string, AgentFacts>;
  private addresses: BoundedCache<string, AddressFacts>;
  /** IPv4 addresses in their one spelling, kept apart (ipv4-facts.ts); `v4Countries` the database they were located by. */
  private readonly v4: Ipv4Facts;
  private v4Countries: unknown;
  /** What `address` answers for an IPv4 address: one object, filled anew by each call. */
  private readonly v4Found: AddressFacts = { address: null, country: null, countries: undefined, hash: undefined };
  private readonly max: number;

  constructor(private readonly options: ClientFactsOptions) {
    this.max = options.max ?? CLIENT_FACTS;
    this.agents = new BoundedCache(this.max);
    this.addresses = new BoundedCache(this.max);
    this.v4 = new Ipv4Facts(this.max);
  }

  /** Forgets everything unless `day` is the day remembered. */
  startDay(day: number): void {
    if (day === this.day) return;
    this.day = day;
    this.agents = new BoundedCache(this.max);
    this.addresses = new BoundedCache(this.max);
    this.v4.clear();
  }

  /** The facts of `ua`, hashed under `key` when given (the key of the day of `startDay`). */
  agent(ua: string | undefined, key: KeyObject | undefined): AgentFacts {
    const name = ua ?? NO_AGENT;
    let facts = this.agents.get(name);
    if (facts === undefined) facts = this.agents.set(name, { families: this.options.classify(ua), hash: undefined });
    if (facts.hash === undefined && key !== undefined) facts.hash = agentHash(key, ua);
    return facts;
  }

  /**
   * The facts of the address spelled `entry`, hashed under `key` when given. The object answered
   * for an IPv4 address is filled anew by the next call: read it at once.
   */
  address(entry: string, key: KeyObject | undefined): AddressFacts {
    const v4 = parseIPv4(entry);
    if (v4 === -1) return this.spelled(entry, key);
    const found = this.ipv4(v4, entry, 0, entry.length, key);
    found.address = entry;
    return found;
  }

  /**
   * The country and hash of the address spelled `text.slice(from, to)` (an entry of
   * `X-Forwarded-For`, client-address.ts `forwardedRange`): `address` without making the string
   * of an IPv4 address the table knows. Filled anew by the next call, as `address`'s answer.
   */
  addressIn(text: string, from: number, to: number, key: KeyObject | undefined): Located {
    const v4 = parseIPv4(text, from, to);
    if (v4 !== -1) return this.ipv4(v4, text, from, to, key);
    return this.spelled(text.slice(from, to), key);
  }

  /** `address` of an entry that is not an IPv4 address in its one spelling. */
  private spelled(entry: string, key: KeyObject | undefined): AddressFacts {
    let facts = this.addresses.get(entry);
    if (facts === undefined) {
      const address = canonicalAddress(entry);
      facts = this.addresses.set(entry, { address, country: null, countries: undefined, hash: undefined });
    }
    if (facts.address !== null) {
      const countries = this.options.countries();
      if (facts.countries !== countries) {
        facts.country = this.options.countryOf(facts.address);
        facts.countries = countries;
      }
      if (facts.hash === undefined && key !== undefined) facts.hash = addressHash(key, facts.address);
    }
    return facts;
  }

  /**
   * The answer for the IPv4 address `v4`, spelled `text.slice(from, to)` (its one spelling: its
   * canonical address), made as a string only when the table does not know it yet.
   */
  private ipv4(v4: number, text: string, from: number, to: number, key: KeyObject | undefined): AddressFacts {
    const countries = this.options.countries();
    if (countries !== this.v4Countries) {
      // A reloaded country database: every address is located again.
      this.v4.clear();
      this.v4Countries = countries;
    }
    const table = this.v4;
    let at = table.find(v4);
    if (at === -1) at = table.add(v4, countryNumber(this.options.countryOf(text.slice(from, to))));
    if (key !== undefined && table.hash(at) === undefined) table.setHash(at, addressHash(key, text.slice(from, to)));
    const found = this.v4Found;
    found.address = null;
    found.country = table.country(at);
    found.countries = countries;
    found.hash = table.hash(at);
    return found;
  }

  /** Values remembered, of every kind. */
  get size(): number {
    return this.agents.size + this.addresses.size + this.v4.size;
  }
}

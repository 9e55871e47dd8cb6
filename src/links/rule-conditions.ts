/**
 * The values a redirect rule's conditions compare (redirect-rules.ts), on both sides: what a rule
 * may hold (each `check…` returns the value as stored, or a `Refusal` worded without its path), and
 * what a visitor brings (the languages of an `Accept-Language`, an address as numbers), read once
 * per distinct header value and remembered within a bound, since they are read on the redirect.
 */
import { isIPv4, isIPv6 } from 'node:net';
import type { Browser, Device, Os } from '../visits/event.ts';
import { Refusal } from './refusal.ts';

/**
 * What a rule list may ask of one visitor. Each fact is asked only when a condition needs it, and
 * at most once per `firstMatch`, so a list that looks only at the query never classifies the
 * `User-Agent`. `address` may be IPv4-mapped IPv6 (`::ffff:10.0.0.1`); it then counts as IPv4.
 */
export interface RuleVisitor {
  os(): Os | null;
  device(): Device | null;
  browser(): Browser | null;
  /** The raw `Accept-Language`, or undefined without one. */
  acceptLanguage(): string | undefined;
  /** ISO 3166-1 alpha-2, upper-case; null when unknown. */
  country(): string | null;
  query(): URLSearchParams;
  address(): string | null;
  /** Unix seconds. */
  now(): number;
}

/** An address as numbers: IPv4 in one 32-bit word, IPv6 in four (the highest first). */
export interface Ip {
  readonly v6: boolean;
  readonly words: readonly number[];
}

/**
 * A visitor's facts, each asked of it on first use and kept until the next `reset`. One instance
 * serves every `firstMatch` (it is synchronous), so matching allocates nothing of its own.
 */
export class Facts {
  private visitor: RuleVisitor | undefined = undefined;
  private osFact: Os | null | undefined = undefined;
  private deviceFact: Device | null | undefined = undefined;
  private browserFact: Browser | null | undefined = undefined;
  private languagesFact: readonly string[] | undefined = undefined;
  private countryFact: string | null | undefined = undefined;
  private queryFact: URLSearchParams | undefined = undefined;
  private addressFact: Ip | null | undefined = undefined;
  private nowFact: number | undefined = undefined;

  reset(visitor: RuleVisitor | undefined): void {
    this.visitor = visitor;
    this.osFact = this.deviceFact = this.browserFact = this.countryFact = this.languagesFact = undefined;
    this.queryFact = this.addressFact = this.nowFact = undefined;
  }
  os(): Os | null {
    return this.osFact === undefined ? (this.osFact = this.visitor!.os()) : this.osFact;
  }
  device(): Device | null {
    return this.deviceFact === undefined ? (this.deviceFact = this.visitor!.device()) : this.deviceFact;
  }
  browser(): Browser | null {
    return this.browserFact === undefined ? (this.browserFact = this.visitor!.browser()) : this.browserFact;
  }
  languages(): readonly string[] {
    return this.languagesFact === undefined ? (this.languagesFact = acceptedLanguages(this.visitor!.acceptLanguage())) : this.languagesFact;
  }
  country(): string | null {
    return this.countryFact === undefined ? (this.countryFact = this.visitor!.country()) : this.countryFact;
  }
  query(): URLSearchParams {
    return this.queryFact === undefined ? (this.queryFact = this.visitor!.query()) : this.queryFact;
  }
  address(): Ip | null {
    if (this.addressFact !== undefined) return this.addressFact;
    const text = this.visitor!.address();
    return (this.addressFact = text === null ? null : visitorIp(text));
  }
  now(): number {
    return this.nowFact === undefined ? (this.nowFact = this.visitor!.now()) : this.nowFact;
  }
}

/** Distinct header values remembered per kind (`Accept-Language`, address); the oldest goes first. */
const REMEMBERED = 1024;
/** Longer headers are parsed each time, never remembered: a flood of them cannot fill memory. */
const LONGEST_REMEMBERED = 256;
/** The tags of one `Accept-Language` read: enough for any browser, a bound for a hostile header. */
const MOST_TAGS = 32;
/**
 * The least weight (in thousandths) at which a language counts: anything but `q=0`, which RFC 9110
 * §12.5.4 makes "not acceptable". (Shlink counts only q ≥ 0.9, so a second language of a browser's
 * list does not send its user to that language's page; 900 here would do the same.)
 */
const MIN_QUALITY = 1;

function remember<K, V>(cache: Map<K, V>, key: K, value: V): V {
  if (cache.size >= REMEMBERED) cache.delete(cache.keys().next().value!);
  cache.set(key, value);
  return value;
}

const NO_LANGUAGES: readonly string[] = [];
const languageCache = new Map<string, readonly string[]>();

/**
 * The languages an `Accept-Language` accepts (weight above `MIN_QUALITY`), in the form a rule
 * stores (`fr`, `fr-CA`, `es-419`): a script subtag is skipped (`zh-Hant-TW` is `zh-TW`), and `*`
 * and tags that are no language are left out.
 */
export function acceptedLanguages(header: string | undefined): readonly string[] {
  if (header === undefined || header === '') return NO_LANGUAGES;
  const known = languageCache.get(header);
  if (known !== undefined) return known;
  const accepted: string[] = [];
  for (const piece of header.split(',', MOST_TAGS)) {
    const semicolon = piece.indexOf(';');
    if (semicolon !== -1 && quality(piece.slice(semicolon + 1)) < MIN_QUALITY) continue;
    const tag = storedTag(semicolon === -1 ? piece.trim() : piece.slice(0, semicolon).trim());
    if (tag !== undefined) accepted.push(tag);
  }
  const answer: readonly string[] = accepted;
  return header.length > LONGEST_REMEMBERED ? answer : remember(languageCache, header, answer);
}

const Q_VALUE = /^\s*[qQ]\s*=\s*(?:(0)(?:\.(\d{0,3}))?|1(?:\.0{0,3})?)\s*$/;

/** A tag's parameters (after its `;`) → its weight in thousandths; -1 when malformed (ignored). */
function quality(parameters: string): number {
  const m = Q_VALUE.exec(parameters);
  if (m === null) return -1;
  if (m[1] === undefined) return 1000;
  return m[2] === undefined || m[2] === '' ? 0 : Number(m[2].padEnd(3, '0'));
}

const LANGUAGE_TAG = /^([A-Za-z]{1,8})(?:-[A-Za-z]{4})?(?:-([A-Za-z]{2}|\d{3}))?(?:-[A-Za-z0-9]{1,8})*$/;

/** `fr-ca` → `fr-CA`, `zh-Hant-TW` → `zh-TW`, `*` and non-tags → undefined. */
function storedTag(text: string): string | undefined {
  const m = LANGUAGE_TAG.exec(text);
  if (m === null) return undefined;
  const primary = m[1]!.toLowerCase();
  return m[2] === undefined ? primary : `${primary}-${m[2].toUpperCase()}`;
}

/**
 * Whether `accepted` holds `rule`: `fr` is any French (`fr`, or `fr-` and a region), `fr-CA` only
 * French of Canada (an accepted tag holds no more than a primary tag and a region).
 */
export function acceptsLanguage(accepted: readonly string[], rule: string): boolean {
  for (let i = 0; i < accepted.length; i++) {
    const tag = accepted[i]!;
    if (tag === rule || (tag.length > rule.length && tag.charCodeAt(rule.length) === 45 && tag.startsWith(rule))) return true;
  }
  return false;
}

const RULE_LANGUAGE = /^([A-Za-z]{2,3})(?:-([A-Za-z]{2}|\d{3}))?$/;

/** A rule's `language`: a primary tag (`fr`), or one with a region (`fr-CA`, `es-419`). */
export function checkLanguage(value: unknown): string | Refusal {
  const m = typeof value === 'string' ? RULE_LANGUAGE.exec(value) : null;
  if (m === null) return new Refusal(`must be a language tag such as fr or fr-CA${notThis(value)}`);
  return m[2] === undefined ? m[1]!.toLowerCase() : `${m[1]!.toLowerCase()}-${m[2].toUpperCase()}`;
}

/** The end of a refusal of `value`: `, not "tv"` (JSON, cut short), or that none was given. */
export function notThis(value: unknown): string {
  if (value === undefined) return ' (none was given)';
  const text = typeof value === 'bigint' ? `${value}` : (JSON.stringify(value) ?? typeof value);
  return `, not ${text.length > 60 ? `${text.slice(0, 60)}…` : text}`;
}

/** `d.d.d.d` (decimal 0–255, no leading zeros, as `isIPv4` holds it) → its 32 bits; -1 when it is not one. */
function ipv4(text: string): number {
  if (!isIPv4(text)) return -1;
  const [a, b, c, d] = text.split('.').map(Number) as [number, number, number, number];
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

/** An IPv6 address's eight 16-bit groups (`::` and a trailing dotted IPv4 read); null if none. */
function ipv6Groups(text: string): number[] | null {
  // `isIPv6` holds the syntax strictly but for a zone (`fe80::1%eth0`), which a rule cannot name.
  if (text.includes('%') || !isIPv6(text)) return null;
  const groups = (part: string): number[] =>
    part === '' ? [] : part.split(':').flatMap((g) => (g.includes('.') ? [ipv4(g) >>> 16, ipv4(g) & 0xffff] : [parseInt(g, 16)]));
  const [head, tail] = text.split('::') as [string, string | undefined];
  if (tail === undefined) return groups(head);
  const left = groups(head);
  const right = groups(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/** An address (no port, brackets or zone) as numbers, IPv4-mapped IPv6 as IPv4; null if none. */
export function parseIp(text: string): Ip | null {
  if (!text.includes(':')) {
    const v4 = ipv4(text);
    return v4 === -1 ? null : { v6: false, words: [v4] };
  }
  const g = ipv6Groups(text);
  if (g === null) return null;
  const words = [0, 2, 4, 6].map((k) => (g[k]! * 0x10000 + g[k + 1]!) >>> 0);
  return words[0] === 0 && words[1] === 0 && words[2] === 0xffff ? { v6: false, words: [words[3]!] } : { v6: true, words };
}

/** An address as text: IPv4 dotted, IPv6 as RFC 5952 writes it (lower case, longest zero run as `::`). */
export function formatIp(ip: Ip): string {
  if (!ip.v6) return [24, 16, 8, 0].map((shift) => (ip.words[0]! >>> shift) & 255).join('.');
  const groups = ip.words.flatMap((w) => [w >>> 16, w & 0xffff]);
  let best = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; i++) {
    let end = i;
    while (end < 8 && groups[end] === 0) end++;
    if (end - i > bestLength) [best, bestLength] = [i, end - i];
  }
  const text = (from: number, to: number) =>
    groups
      .slice(from, to)
      .map((g) => g.toString(16))
      .join(':');
  return best === -1 ? text(0, 8) : `${text(0, best)}::${text(best + bestLength, 8)}`;
}

const addressCache = new Map<string, Ip | null>();

/** The visitor's address as numbers (a zone dropped), remembered per spelling. */
function visitorIp(text: string): Ip | null {
  const known = addressCache.get(text);
  if (known !== undefined) return known;
  const zone = text.indexOf('%');
  return remember(addressCache, text, parseIp(zone === -1 ? text : text.slice(0, zone)));
}

/** A block of addresses: the network's words and a mask per word. */
export interface IpBlock extends Ip {
  readonly masks: readonly number[];
}

/** The masks of a `/prefix` over `count` words. */
function masks(prefix: number, count: number): number[] {
  return Array.from({ length: count }, (_, k) => {
    const bits = Math.min(32, Math.max(0, prefix - 32 * k));
    return bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  });
}

/**
 * A rule's `ip-address`: an address or a CIDR block, as stored (canonical spelling; an
 * IPv4-mapped address, or a block of them of /96 or narrower, as IPv4). A block must be written
 * as its network: `10.0.0.1/8` is refused, naming `10.0.0.0/8`.
 */
export function checkIpRule(value: unknown): string | Refusal {
  const bad = new Refusal(`must be an IPv4 or IPv6 address, or a CIDR block such as 10.0.0.0/8 or 2001:db8::/32${notThis(value)}`);
  if (typeof value !== 'string') return bad;
  const block = ipBlock(value);
  if (block === null) return bad;
  const network = formatIp({ v6: block.v6, words: block.words.map((w, k) => (w & block.masks[k]!) >>> 0) });
  const text = block.prefix === undefined ? network : `${network}/${block.prefix}`;
  if (block.words.some((w, k) => (w & block.masks[k]!) >>> 0 !== w)) return new Refusal(`${value} has bits set past its prefix: the block is ${text}`);
  return text;
}

/** `address[/prefix]` → its block; null when it is none. */
export function ipBlock(text: string): (IpBlock & { prefix: number | undefined }) | null {
  const slash = text.indexOf('/');
  let ip = parseIp(slash === -1 ? text : text.slice(0, slash));
  if (ip === null) return null;
  let prefix: number | undefined;
  if (slash !== -1) {
    const digits = text.slice(slash + 1);
    if (!/^(?:0|[1-9]\d{0,2})$/.test(digits)) return null;
    prefix = Number(digits);
    // A mapped address was read as IPv4: a prefix of 96 or more counts the bits of its IPv4 part;
    // a shorter one is a block of IPv6 (whose bits past the prefix are then set).
    if (!ip.v6 && text.includes(':')) {
      if (prefix >= 96) prefix -= 96;
      else ip = { v6: true, words: [0, 0, 0xffff, ip.words[0]!] };
    }
    if (prefix > (ip.v6 ? 128 : 32)) return null;
  }
  return { v6: ip.v6, words: ip.words, masks: masks(prefix ?? (ip.v6 ? 128 : 32), ip.words.length), prefix };
}

/** Whether `ip` lies in `block`; an IPv4 address never lies in an IPv6 block, nor the reverse. */
export function inBlock(ip: Ip | null, block: IpBlock): boolean {
  if (ip === null || ip.v6 !== block.v6) return false;
  for (let k = 0; k < block.words.length; k++) if (((ip.words[k]! ^ block.words[k]!) & block.masks[k]!) !== 0) return false;
  return true;
}

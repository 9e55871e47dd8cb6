/**
 * The client's address, for its country and its daily visitor id (never stored itself).
 *
 * Behind `trust_proxy` = N proxies, each proxy appends the address it was reached from to
 * `X-Forwarded-For`, so the N-th entry from the right is the one the first trusted proxy saw: the
 * client. Entries left of it were written by the client or by proxies nobody vouches for, and
 * anyone can send `X-Forwarded-For: 1.2.3.4`, so they are never read. A header with fewer than N
 * entries gives its leftmost (fewer proxies were passed than configured, and the leftmost is still
 * a trusted proxy's). Without the header the request came in directly (a health check, a client
 * that went round the proxy), so the socket's peer is the client. With `trust_proxy` = 0 the
 * header is ignored: a client could write anything in it.
 *
 * One client must be one address, whatever spelling reached us, so the answer is canonical: no
 * port, no brackets, no IPv6 zone, IPv6 in its shortest lower-case form, and an IPv4 address that
 * arrived IPv4-mapped (`::ffff:1.2.3.4`, as a dual-stack socket reports it) as plain IPv4. An entry
 * that is no address at all (`unknown`, a name, an empty field) gives `null`, not the socket's
 * address: the socket's peer is then the proxy, and giving every such visitor the proxy's address
 * would merge them into one visitor with the proxy's country.
 */
import { isIPv4, isIPv6 } from 'node:net';

/** The most proxies `trust_proxy` may name. */
export const MAX_TRUST_PROXY = 10;

/**
 * `socketAddress` (the socket's `remoteAddress`) and `X-Forwarded-For` (as node:http hands it over:
 * repeated headers already joined; an array, as its type allows, is read the same way) → the
 * client's address as the request spelled it.
 */
type ClientAddress = (socketAddress: string | undefined, forwardedFor: string | readonly string[] | undefined) => string | null;

/**
 * The client's address as the request spelled it (before `canonicalAddress`), under `trustProxy`
 * proxies (0 to 10): what the recorder keys what it knows of a client by, so that a returning
 * client costs one lookup and no parsing (client-facts.ts), and the create limit its counts
 * (`canonicalAddress` of it is the client's one address).
 */
export function clientAddressEntry(trustProxy: number): ClientAddress {
  if (!Number.isInteger(trustProxy) || trustProxy < 0 || trustProxy > MAX_TRUST_PROXY) {
    throw new RangeError(`trust_proxy must be an integer from 0 to ${MAX_TRUST_PROXY}, got ${trustProxy}`);
  }
  if (trustProxy === 0) {
    return function socketAddressOnly(socketAddress) {
      return socketAddress ?? null;
    };
  }
  const range: EntryRange = { from: 0, to: 0 };
  return function forwardedEntry(socketAddress, forwardedFor) {
    if (forwardedFor === undefined) return socketAddress ?? null;
    const list = forwardedList(forwardedFor);
    forwardedRange(list, trustProxy, range);
    return list.slice(range.from, range.to);
  };
}

/** `X-Forwarded-For` as one list: node:http joins repeated headers with ", ", in the order they came. */
export function forwardedList(forwardedFor: string | readonly string[]): string {
  return typeof forwardedFor === 'string' ? forwardedFor : forwardedFor.join(',');
}

/** Where an entry lies in a list: `list.slice(from, to)`. */
export interface EntryRange {
  from: number;
  to: number;
}

/**
 * Sets `range` to the entry `clientAddressEntry` answers for `list` under `trustProxy` (1 to 10)
 * proxies: after the `trustProxy`-th comma from the right (the leftmost entry when there are
 * fewer), without the white space `String.prototype.trim` removes. No string is made, so the
 * recorder reads an IPv4 address where it stands (client-facts.ts); and the scan is a loop, where
 * `lastIndexOf` and `trim` were each a call into the engine's runtime on every counted visit.
 */
export function forwardedRange(list: string, trustProxy: number, range: EntryRange): void {
  let end = list.length;
  let start = lastComma(list, end - 1);
  for (let k = 1; k < trustProxy && start !== -1; k++) {
    end = start;
    start = lastComma(list, start - 1);
  }
  let from = start + 1;
  while (from < end && isTrimmed(list.charCodeAt(from))) from++;
  while (end > from && isTrimmed(list.charCodeAt(end - 1))) end--;
  range.from = from;
  range.to = end;
}

function lastComma(list: string, at: number): number {
  for (let i = at; i >= 0; i--) if (list.charCodeAt(i) === 0x2c) return i;
  return -1;
}

/** What `trim` removes: ECMAScript's white space and line terminators. */
function isTrimmed(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return (
    c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff
  );
}

const MAPPED_IPV4 = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/;

/** `entry` as one canonical address, or `null` when it is none (rules above). */
export function canonicalAddress(entry: string): string | null {
  let address = entry;
  if (address.startsWith('[')) {
    // `[v6]` or `[v6]:port`
    const end = address.indexOf(']');
    if (end < 0) return null;
    address = address.slice(1, end);
  } else if (address.indexOf(':') !== -1 && address.indexOf(':') === address.lastIndexOf(':')) {
    // One colon: IPv4 with a port (an IPv6 address has at least two).
    address = address.slice(0, address.indexOf(':'));
  }
  if (isIPv4(address)) return address;
  // A dual-stack socket reports every IPv4 peer so: answered without the URL parser below.
  if (address.startsWith('::ffff:') && isIPv4(address.slice(7))) return address.slice(7);
  const zone = address.indexOf('%');
  if (zone !== -1) address = address.slice(0, zone);
  const known = canonicalV6.get(address);
  if (known !== undefined) return known;
  const answer = canonicalIPv6(address);
  if (canonicalV6.size >= CANONICAL_V6_CACHE) canonicalV6.delete(canonicalV6.keys().next().value!);
  canonicalV6.set(address, answer);
  return answer;
}

/**
 * IPv6 spellings made canonical lately: the URL parser below costs a microsecond or two, paid
 * once per spelling rather than on every visit of a returning client. Bounded; the oldest goes.
 */
const CANONICAL_V6_CACHE = 4096;
const canonicalV6 = new Map<string, string | null>();

/** An IPv6 address (no brackets, port or zone) in its one spelling, an IPv4-mapped one as IPv4; null if none. */
function canonicalIPv6(address: string): string | null {
  if (!isIPv6(address)) return null;
  // The WHATWG URL parser writes IPv6 the one canonical way (RFC 5952): lower case, zeros compressed.
  const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const mapped = MAPPED_IPV4.exec(canonical);
  if (mapped === null) return canonical;
  const high = parseInt(mapped[1]!, 16);
  const low = parseInt(mapped[2]!, 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

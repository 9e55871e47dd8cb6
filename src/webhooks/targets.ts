/**
 * Where a webhook may be delivered: a receiver out on the internet, never this
 * machine, its private network, a link-local service or a cloud's metadata server, which would
 * hand an admin who can name a URL (or whoever controls that URL's DNS) the credentials of the host.
 * Pure: the DNS lookup is passed in, and nothing here opens a socket.
 *
 * A URL is checked twice. When a subscription is made, `checkWebhookUrl` refuses a literal address
 * (and `localhost`) at once, so an admin hears of the mistake then. At each delivery,
 * `resolveTarget` resolves the name again and checks every address it gets: a check at subscription
 * only would let DNS point the name somewhere else later, and a check of one address of several
 * would let DNS answer a good one for the check and a bad one for the connection. So it returns
 * the address it checked, and the delivery must connect to exactly that one (see `Target`).
 */
import { isIP } from 'node:net';
import { Refusal, unstorableText } from '../links/refusal.ts';
import { formatIp, type Ip, type IpBlock, inBlock, ipBlock, parseIp } from '../links/rule-conditions.ts';
import { isLoopbackHost } from '../links/url-rules.ts';

/** The longest subscription URL, before and after normalization. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

const LOOPBACK = 'a loopback address';
const NO_ADDRESS = 'an unspecified address';
const PRIVATE = 'a private address';
const LINK_LOCAL = 'a link-local address';
const METADATA = 'a cloud metadata address';
const MULTICAST = 'a multicast address';
const DOCUMENTATION = 'a documentation address';
const BENCHMARKING = 'a benchmarking address';
const RESERVED = 'a reserved address';

/**
 * The forbidden IPv4 blocks and why, the most specific first: the first block that holds an
 * address names its reason, so 169.254.169.254 is a metadata address rather than only link-local.
 * Every block is one IANA's special-purpose registry marks as not globally reachable, bar the
 * metadata addresses (which lie inside such blocks anyway). The metadata addresses are the ones a
 * cloud serves instance credentials on: 169.254.169.254 (AWS, Azure, Google Cloud, Oracle Cloud,
 * DigitalOcean, OpenStack and most others), 100.100.100.200 (Alibaba Cloud) and 192.0.0.192 (the
 * older Oracle Cloud Classic). A subnet's own broadcast address (x.y.z.255 in a /24) cannot be
 * told from a host without the netmask, and is left to the network.
 */
const V4: readonly (readonly [string, string])[] = [
  ['169.254.169.254', METADATA],
  ['100.100.100.200', METADATA],
  ['192.0.0.192', METADATA],
  ['255.255.255.255', 'the broadcast address'],
  // Connecting to 0.0.0.0 reaches this machine on Linux and macOS.
  ['0.0.0.0/8', NO_ADDRESS],
  ['10.0.0.0/8', PRIVATE],
  ['100.64.0.0/10', 'a carrier-grade NAT address'],
  ['127.0.0.0/8', LOOPBACK],
  ['169.254.0.0/16', LINK_LOCAL],
  ['172.16.0.0/12', PRIVATE],
  // IETF protocol assignments (RFC 6890): NAT64 discovery, PCP and TURN anycast, none a receiver.
  ['192.0.0.0/24', RESERVED],
  ['192.0.2.0/24', DOCUMENTATION],
  // The 6to4 relay anycast block, deprecated by RFC 7526.
  ['192.88.99.0/24', RESERVED],
  ['192.168.0.0/16', PRIVATE],
  // RFC 2544 benchmarking; also the fake-IP range of common local proxies, which map it to any host.
  ['198.18.0.0/15', BENCHMARKING],
  ['198.51.100.0/24', DOCUMENTATION],
  ['203.0.113.0/24', DOCUMENTATION],
  ['224.0.0.0/4', MULTICAST],
  // Class E, reserved for future use: no host has one.
  ['240.0.0.0/4', RESERVED],
];

/**
 * The forbidden IPv6 blocks, read after the IPv4 embeddings below. The metadata addresses are
 * AWS's (fd00:ec2::254) and Google Cloud's (fd20:ce::254); both are unique-local, listed first only
 * so the reason names them. Everything outside 2000::/3, the only space IANA allocates for global
 * unicast, is reserved (the last three rows), which also covers the discard prefix 100::/64, the
 * SRv6 prefix 5f00::/16 and whatever IANA later carves out of unallocated space.
 */
const V6: readonly (readonly [string, string])[] = [
  ['::', NO_ADDRESS],
  ['::1', LOOPBACK],
  ['fd00:ec2::254', METADATA],
  ['fd20:ce::254', METADATA],
  // Local-use NAT64 (RFC 8215): a site's own translator, into its own IPv4 network.
  ['64:ff9b:1::/48', PRIVATE],
  // Teredo (RFC 4380) tunnels to an IPv4 address obfuscated in the last 32 bits; the protocol is
  // deprecated, so the whole prefix is refused rather than decoded.
  ['2001::/32', 'a Teredo tunnel address'],
  ['2001:2::/48', BENCHMARKING],
  ['2001:db8::/32', DOCUMENTATION],
  // RFC 9637's second documentation prefix, inside 2000::/3.
  ['3fff::/20', DOCUMENTATION],
  ['fc00::/7', PRIVATE],
  ['fe80::/10', LINK_LOCAL],
  // Site-local (RFC 3879): deprecated, but where still configured it is a private network.
  ['fec0::/10', PRIVATE],
  ['ff00::/8', MULTICAST],
  ['::/3', RESERVED],
  ['4000::/2', RESERVED],
  ['8000::/1', RESERVED],
];

/**
 * IPv6 blocks that carry an IPv4 address, which is then what is reached (by a dual-stack socket,
 * a translator or a tunnel): such an address is as forbidden as its IPv4 address, and as allowed,
 * whatever V6 says of its block. `shift` is where the IPv4 address's lowest bit lies. The
 * IPv4-mapped form (::ffff:0:0/96) is not here: `parseIp` reads it as IPv4 itself.
 */
const EMBEDDINGS: readonly (readonly [cidr: string, shift: number, form: string])[] = [
  ['::/96', 0, 'IPv4-compatible'],
  ['::ffff:0:0:0/96', 0, 'IPv4-translated'],
  ['64:ff9b::/96', 0, 'NAT64'],
  ['2002::/16', 80, '6to4'],
];

function blockOf(cidr: string): IpBlock {
  const block = ipBlock(cidr);
  if (block === null) throw new Error(`not a CIDR block: ${cidr}`);
  return block;
}

interface Blocks {
  v4: readonly { block: IpBlock; reason: string }[];
  v6: readonly { block: IpBlock; reason: string }[];
  /** :: and ::1, which lie in ::/96 but are IPv6's own, not the IPv4 addresses 0.0.0.0 and 0.0.0.1. */
  own: IpBlock;
  embeddings: readonly { block: IpBlock; shift: number; form: string }[];
}

let parsed: Blocks | undefined;

/**
 * The tables above, parsed at the first check rather than as the module loads: parsing an IPv6
 * block first compiles `net.isIPv6`'s pattern, 2 to 4.5 ms of every start, with or without webhooks.
 */
function blocks(): Blocks {
  parsed ??= {
    v4: V4.map(([cidr, reason]) => ({ block: blockOf(cidr), reason })),
    v6: V6.map(([cidr, reason]) => ({ block: blockOf(cidr), reason })),
    own: blockOf('::/127'),
    embeddings: EMBEDDINGS.map(([cidr, shift, form]) => ({ block: blockOf(cidr), shift, form })),
  };
  return parsed;
}

/** The reason of the first block of `table` that holds `ip`. */
function firstReason(ip: Ip, table: readonly { block: IpBlock; reason: string }[]): string | undefined {
  return table.find(({ block }) => inBlock(ip, block))?.reason;
}

/** The 32 bits of an IPv6 address (as four 32-bit words) whose lowest bit is bit `shift`. */
function bitsAt(words: readonly number[], shift: number): number {
  const value = words.reduce((all, word) => (all << 32n) | BigInt(word), 0n);
  return Number((value >> BigInt(shift)) & 0xffffffffn);
}

/**
 * Why `address` must not be a webhook's target, as a phrase ("a private address"), or undefined
 * when it may be. `address` is an IPv4 or IPv6 address as `dns.lookup` or `net.isIP` reads it
 * (a zone such as `%eth0` is ignored); anything else is refused too, since it cannot be checked.
 */
export function forbiddenReason(address: string): string | undefined {
  const zone = address.indexOf('%');
  const ip = parseIp(zone === -1 ? address : address.slice(0, zone));
  if (ip === null) return 'not an IP address';
  const { v4: v4Blocks, v6: v6Blocks, own, embeddings } = blocks();
  if (!ip.v6) {
    const reason = firstReason(ip, v4Blocks);
    return reason !== undefined && address.includes(':') ? `${reason} (${formatIp(ip)}, IPv4-mapped)` : reason;
  }
  if (inBlock(ip, own)) return firstReason(ip, v6Blocks);
  for (const { block, shift, form } of embeddings) {
    if (!inBlock(ip, block)) continue;
    const v4: Ip = { v6: false, words: [bitsAt(ip.words, shift)] };
    const reason = firstReason(v4, v4Blocks);
    return reason === undefined ? undefined : `${reason} (${formatIp(v4)}, ${form})`;
  }
  return firstReason(ip, v6Blocks);
}

/** The host of a URL as a lookup or `isIP` takes it: an IPv6 literal without its brackets. */
const bareHost = (url: URL): string => (url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname);

/** `input` parsed, or null: no exception per bad URL. */
function parseUrl(input: string): URL | null {
  try {
    return new URL(input);
  } catch {
    return null;
  }
}

/**
 * The WHATWG serialization of an acceptable subscription URL, or why it is not one: an absolute
 * http or https URL with a host, no user name or password (a receiver authenticates a delivery by
 * its signature, and credentials in a URL end up in logs and lists), at most 2,048 characters
 * before and after normalization, not a literal forbidden address nor a `localhost` name unless
 * `allowPrivate` (the `webhook_allow_private` setting). A name is not resolved here: its addresses
 * are checked at each delivery, by `resolveTarget`.
 */
export function checkWebhookUrl(input: unknown, options: { allowPrivate: boolean } = { allowPrivate: false }): string | Refusal {
  if (input === undefined || input === null || input === '') return new Refusal('url is required');
  if (typeof input !== 'string') return new Refusal('url must be a string');
  const unstorable = unstorableText(input, 'url');
  if (unstorable !== undefined) return new Refusal(unstorable);
  if (input.length > MAX_WEBHOOK_URL_LENGTH) {
    return new Refusal(`url is too long: ${input.length} characters, the limit is ${MAX_WEBHOOK_URL_LENGTH}`);
  }
  const url = parseUrl(input);
  if (url === null) return new Refusal('url must be an absolute URL such as https://example.com/hooks');
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return new Refusal(`url must use http or https, not ${url.protocol.slice(0, -1)}`);
  }
  if (!url.hostname) return new Refusal('url must have a host');
  if (url.username || url.password) return new Refusal('url must not contain a user name or password');
  if (url.href.length > MAX_WEBHOOK_URL_LENGTH) {
    return new Refusal(`url is too long once normalized: ${url.href.length} characters, the limit is ${MAX_WEBHOOK_URL_LENGTH}`);
  }
  if (!options.allowPrivate) {
    const host = bareHost(url);
    // The parser has already turned 0x7f.1, 2130706433 and the like into dotted IPv4.
    const reason = isIP(host) !== 0 ? forbiddenReason(host) : isLoopbackHost(url.hostname) ? 'this machine' : undefined;
    if (reason !== undefined) return new Refusal(`url points at ${host}, ${reason}; only webhook_allow_private allows that`);
  }
  return url.href;
}

/** One answer of a DNS lookup, as `dns.promises.lookup(host, { all: true })` gives it. */
export interface LookupAddress {
  address: string;
  family: 4 | 6;
}

/**
 * Where to deliver: connect to `address` on `port` (never to `host`, which a second lookup could
 * answer differently); send `host` in the `Host` header (with `:port` when the port is not the
 * scheme's default, and in brackets when it is an IPv6 address: the URL's own `host`) and, for https, as the TLS
 * `servername`, which is also the name the certificate is verified against (unless `host` is an IP
 * address, which SNI cannot carry: the certificate is then verified against the address).
 */
export interface Target {
  ok: true;
  address: string;
  family: 4 | 6;
  host: string;
  port: number;
}

/**
 * The address a delivery to `url` connects to, or why there is none, resolved afresh for each
 * delivery. Every address the name resolves to must be allowed, not only the first: a resolver that
 * answers one private address among public ones must not get it reached on a later connect. The
 * first address is chosen, in the resolver's order (which follows the system's preference). A
 * literal address is checked without a lookup. Never throws: a failed lookup is a reason. A time
 * limit on the lookup is the caller's, inside the delivery's own.
 */
export async function resolveTarget(
  url: string,
  options: { allowPrivate: boolean; lookup: (host: string) => Promise<LookupAddress[]> },
): Promise<Target | { ok: false; reason: string }> {
  const checked = checkWebhookUrl(url, { allowPrivate: options.allowPrivate });
  if (checked instanceof Refusal) return { ok: false, reason: checked.detail };
  const parsed = new URL(checked);
  const host = bareHost(parsed);
  const port = parsed.port !== '' ? Number(parsed.port) : parsed.protocol === 'https:' ? 443 : 80;
  const literal = isIP(host);
  if (literal !== 0) return { ok: true, address: host, family: literal as 4 | 6, host, port };
  let answers: LookupAddress[];
  try {
    answers = await options.lookup(host);
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    const why = typeof code === 'string' ? code : error instanceof Error ? error.message : String(error);
    return { ok: false, reason: `could not resolve ${host} (${why})` };
  }
  if (!Array.isArray(answers) || answers.length === 0) return { ok: false, reason: `${host} resolves to no address` };
  for (const { address } of answers) {
    // Even with allowPrivate, an answer must be an address: it is what the delivery connects to.
    const reason = isIP(String(address)) === 0 ? 'not an IP address' : options.allowPrivate ? undefined : forbiddenReason(address);
    if (reason !== undefined) return { ok: false, reason: `resolves to ${address}, ${reason}` };
  }
  const first = answers[0]!.address;
  return { ok: true, address: first, family: isIP(first) as 4 | 6, host, port };
}

/**
 * Address text to the bits a search tree is walked with. The text comes from a socket or from a
 * request header a proxy filled in, so anything that is not an address is `null`, never a throw.
 *
 * An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) is the IPv4 address: Node's dual-stack
 * sockets report every IPv4 client that way, and a database need not map `::ffff:0:0/96` (the
 * public-domain country database does not).
 */

/** An IPv4 address as one unsigned 32-bit word, or an IPv6 address as 16 bytes. */
export type Address = { readonly v4: true; readonly word: number } | { readonly v4: false; readonly bytes: Uint8Array };

const HEX_GROUP = /^[0-9A-Fa-f]{1,4}$/;

/**
 * Strict dotted decimal: four parts of 0–255 without leading zeros, so `010.0.0.1` (octal to some
 * parsers, decimal to others) is no address at all rather than a guess.
 */
function parseV4(text: string): number | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let word = 0;
  for (const part of parts) {
    if (part.length === 0 || part.length > 3 || (part.length > 1 && part[0] === '0')) return null;
    let n = 0;
    for (let i = 0; i < part.length; i++) {
      const c = part.charCodeAt(i) - 48;
      if (c < 0 || c > 9) return null;
      n = n * 10 + c;
    }
    if (n > 255) return null;
    word = word * 256 + n;
  }
  return word;
}

/** The 16-bit groups of one side of `::`; a dotted quad is allowed as the last group when `last`. */
function groups(text: string, last: boolean, out: number[]): boolean {
  if (text === '') return true;
  const parts = text.split(':');
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (HEX_GROUP.test(part)) {
      out.push(parseInt(part, 16));
      continue;
    }
    const word = last && i === parts.length - 1 ? parseV4(part) : null;
    if (word === null) return false;
    out.push(word >>> 16, word & 0xffff);
  }
  return true;
}

function parseV6(text: string): Uint8Array | null {
  // A zone (`fe80::1%eth0`) names an interface of the host, not part of the address.
  const zone = text.indexOf('%');
  if (zone >= 0) {
    if (zone === text.length - 1) return null;
    text = text.slice(0, zone);
  }
  const gap = text.indexOf('::');
  if (gap >= 0 && text.indexOf('::', gap + 1) >= 0) return null;
  const head: number[] = [];
  const tail: number[] = [];
  if (gap < 0) {
    if (!groups(text, true, head) || head.length !== 8) return null;
  } else {
    const after = text.slice(gap + 2);
    if (!groups(text.slice(0, gap), false, head) || !groups(after, true, tail)) return null;
    if (head.length + tail.length > 7) return null;
  }
  const bytes = new Uint8Array(16);
  head.forEach((g, i) => {
    bytes[2 * i] = g >> 8;
    bytes[2 * i + 1] = g & 0xff;
  });
  const start = 8 - tail.length;
  tail.forEach((g, i) => {
    bytes[2 * (start + i)] = g >> 8;
    bytes[2 * (start + i) + 1] = g & 0xff;
  });
  return bytes;
}

/** True when the first 10 bytes are zero and the next two 0xff: `::ffff:a.b.c.d`. */
function isV4Mapped(bytes: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (bytes[i] !== 0) return false;
  return bytes[10] === 0xff && bytes[11] === 0xff;
}

/** The address `text` spells, or `null` when it spells none (a name, a port, brackets, junk). */
export function parseAddress(text: string): Address | null {
  if (text.length === 0 || text.length > 64) return null;
  if (!text.includes(':')) {
    const word = parseV4(text);
    return word === null ? null : { v4: true, word };
  }
  const bytes = parseV6(text);
  if (bytes === null) return null;
  if (isV4Mapped(bytes)) return { v4: true, word: ((bytes[12]! << 24) | (bytes[13]! << 16) | (bytes[14]! << 8) | bytes[15]!) >>> 0 };
  return { v4: false, bytes };
}

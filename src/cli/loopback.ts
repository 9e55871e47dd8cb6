/**
 * Whether a listen address is reachable only from this machine: 127.0.0.0/8, ::1 in any spelling
 * (IPv4-mapped loopback included) and `localhost`. Anything else — `0.0.0.0`, `::`, a LAN address,
 * a host name that could resolve anywhere — counts as reachable from outside.
 *
 * Not `validate.ts`'s `isLoopbackHost`, which asks the opposite question of a URL's host: whether
 * a connection to it reaches this machine (`0.0.0.0` does; listening there is not local).
 */
import { BlockList, isIP } from 'node:net';

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

export function isLoopbackListenAddress(host: string): boolean {
  const name = host.trim().toLowerCase();
  if (name === 'localhost' || name === 'localhost.') return true;
  const bare = name.startsWith('[') && name.endsWith(']') ? name.slice(1, -1) : name;
  const family = isIP(bare);
  return family !== 0 && LOOPBACK.check(bare, family === 4 ? 'ipv4' : 'ipv6');
}

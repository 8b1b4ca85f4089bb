import { BlockList, isIP } from 'node:net';

/**
 * Whether a URL host can only ever reach this machine. Plain `http://` is allowed to such hosts
 * alone (docs/architecture.md §4.2), so the check errs on the side of "no": names other than `localhost`
 * are not resolved, because DNS can point any name anywhere.
 */
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');
// IPv4-mapped IPv6 (::ffff:127.0.0.1) is matched by BlockList through the IPv4 subnet.

/** `hostname` as `URL.hostname` gives it: lower-case, IPv6 in brackets, IPv4 normalised. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  if (host === 'localhost') return true;
  const family = isIP(host);
  if (family === 4) return LOOPBACK.check(host, 'ipv4');
  if (family === 6) return LOOPBACK.check(host, 'ipv6');
  return false;
}

export function isLoopbackUrl(url: URL): boolean {
  return isLoopbackHost(url.hostname);
}

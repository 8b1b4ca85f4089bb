import type { BlockList } from 'node:net';

/**
 * Whether a URL host can only ever reach this machine. Plain `http://` is allowed to such hosts
 * alone (docs/architecture.md §4.2), so the check errs on the side of "no": names other than `localhost`
 * are not resolved, because DNS can point any name anywhere.
 *
 * node:net is loaded at the first check, not with the module: slack-events bundles this file
 * (through the wiring of all four functions) and never calls it on the ack path.
 */
let loopback: { list: BlockList; isIP: (input: string) => number } | undefined;
function loopbackList() {
  if (!loopback) {
    const net = process.getBuiltinModule('node:net');
    const list = new net.BlockList();
    list.addSubnet('127.0.0.0', 8, 'ipv4');
    list.addAddress('::1', 'ipv6');
    // IPv4-mapped IPv6 (::ffff:127.0.0.1) is matched by BlockList through the IPv4 subnet.
    loopback = { list, isIP: net.isIP };
  }
  return loopback;
}

/** `hostname` as `URL.hostname` gives it: lower-case, IPv6 in brackets, IPv4 normalised. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  if (host === 'localhost') return true;
  const { list, isIP } = loopbackList();
  const family = isIP(host);
  if (family === 4) return list.check(host, 'ipv4');
  if (family === 6) return list.check(host, 'ipv6');
  return false;
}

export function isLoopbackUrl(url: URL): boolean {
  return isLoopbackHost(url.hostname);
}

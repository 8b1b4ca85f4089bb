import { BlockList, isIP } from 'node:net';

/**
 * Addresses a fetch on an agent's behalf must never reach (docs/contract.md, "Files"): this
 * machine, the private networks behind it, link-local (the cloud's metadata service at
 * 169.254.169.254 and fd00:ec2::254), and the ranges that are not one host. An agent names the
 * URL; without this check it could make the verification zone read its own VPC.
 */
let notPublic: BlockList | undefined;

/** Built at the first check, not with the module: the wiring that imports it is bundled into the ack path too. */
function notPublicList(): BlockList {
  if (notPublic) return notPublic;
  const list = new BlockList();
  for (const [network, prefix] of [
    ['0.0.0.0', 8], // "this network"
    ['10.0.0.0', 8],
    ['100.64.0.0', 10], // carrier-grade NAT
    ['127.0.0.0', 8],
    ['169.254.0.0', 16], // link-local, the instance metadata service
    ['172.16.0.0', 12],
    ['192.0.0.0', 24], // IETF protocol assignments
    ['192.168.0.0', 16],
    ['198.18.0.0', 15], // benchmarking
    ['224.0.0.0', 4], // multicast
    ['240.0.0.0', 4], // reserved, broadcast
  ] as const) {
    list.addSubnet(network, prefix, 'ipv4');
  }
  for (const [network, prefix] of [
    ['::', 128], // unspecified
    ['::1', 128],
    ['fc00::', 7], // unique local (fd00:ec2::254 is the IPv6 metadata service)
    ['fe80::', 10], // link-local
    ['ff00::', 8], // multicast
    ['64:ff9b::', 96], // NAT64: reaches IPv4 addresses, the private ones included
    ['2001:db8::', 32], // documentation
  ] as const) {
    list.addSubnet(network, prefix, 'ipv6');
  }
  return (notPublic = list);
}

/** Whether an IP address (v4, v6, or v4-mapped v6) is a public unicast one; not an IP: false. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return !notPublicList().check(mapped[1]!, 'ipv4');
  return !notPublicList().check(address, family === 4 ? 'ipv4' : 'ipv6');
}

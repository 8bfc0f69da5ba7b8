import { BlockList, isIP } from 'node:net';

/** What a forbidden address is, in the words an error message uses. */
export type AddressKind =
  | 'metadata'
  | 'loopback'
  | 'private'
  | 'carrier-grade NAT'
  | 'link-local'
  | 'multicast'
  | 'unique-local'
  | 'unspecified'
  | 'reserved';

type Range = [network: string, prefix: number, kind: AddressKind];

/**
 * Addresses a source may not reach unless an admin allows them: the machine itself, the site's
 * own networks and the clouds' instance-metadata services. First match wins, so the metadata
 * addresses come before the link-local and unique-local ranges that hold them.
 */
const V4: Range[] = [
  ['169.254.169.254', 32, 'metadata'],
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.168.0.0', 16, 'private'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];
const V6: Range[] = [
  ['fd00:ec2::254', 128, 'metadata'],
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  // IPv4-compatible (deprecated) addresses: ::127.0.0.1 would otherwise slip through.
  ['::', 96, 'reserved'],
  ['fc00::', 7, 'unique-local'],
  ['fe80::', 10, 'link-local'],
  ['ff00::', 8, 'multicast'],
];

const LISTS = [...V4, ...V6].map(([network, prefix, kind]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, isIP(network) === 4 ? 'ipv4' : 'ipv6');
  return { list, kind, family: isIP(network) === 4 ? ('ipv4' as const) : ('ipv6' as const) };
});

/**
 * The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`, also written
 * `::ffff:7f00:1`), else the address as given. Connecting to a mapped address reaches the
 * IPv4 one, so it is judged as that.
 *
 * @example unmapIpv4('::ffff:7f00:1') === '127.0.0.1'; unmapIpv4('10.0.0.1') === '10.0.0.1'
 */
export function unmapIpv4(address: string): string {
  const m = /^::ffff:(?:0:)?(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(
    address,
  );
  if (!m) return address;
  if (m[1] !== undefined) return m[1];
  const hi = parseInt(m[2]!, 16);
  const lo = parseInt(m[3]!, 16);
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
}

/**
 * Why a source may not connect to `address` (an IP literal), or null when it is a public
 * address. Names are not resolved here: callers pass the address a connection would use.
 *
 * @example
 *   forbiddenKind('127.0.0.1') === 'loopback'
 *   forbiddenKind('169.254.169.254') === 'metadata'
 *   forbiddenKind('::ffff:10.1.2.3') === 'private'
 *   forbiddenKind('93.184.215.14') === null
 */
export function forbiddenKind(address: string): AddressKind | null {
  const ip = unmapIpv4(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  const version = isIP(ip);
  if (version === 0) return null;
  const family = version === 4 ? 'ipv4' : 'ipv6';
  for (const r of LISTS) {
    if (r.family === family && r.list.check(ip, family)) return r.kind;
  }
  return null;
}

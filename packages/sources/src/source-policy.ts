import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { FreeLoaderError } from '@freeloader/protocol';
import { forbiddenKind, unmapIpv4 } from './address-ranges.js';

/**
 * The environment variable an admin sets on the manager and on agents to let sources reach
 * hosts or networks that are otherwise refused (loopback, private, link-local …): a
 * comma-separated list of hostnames and CIDRs, e.g. `data.lab.internal,10.20.0.0/16,::1`.
 */
export const SOURCE_ALLOW_ENV = 'FREELOADER_SOURCE_ALLOW';

/** Node's `dns.lookup` shape, the one `net.connect`'s `lookup` option takes. */
export type Resolve = (
  hostname: string,
  options: LookupOptions & { all: true },
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/** One allow-list entry checked: a CIDR or address, else a hostname (lower case, no dot). */
interface ParsedAllow {
  hosts: Set<string>;
  networks: BlockList;
}

/**
 * Split and vet an allow list (`FREELOADER_SOURCE_ALLOW` or the admin setting): each entry is
 * a hostname, an IP address or a CIDR. Throws VALIDATION_FAILED naming the first bad entry.
 *
 * @example
 *   parseAllowList('localhost, 10.0.0.0/8 ,::1') // → ['localhost', '10.0.0.0/8', '::1']
 *   parseAllowList('10.0.0.0/33')                // throws VALIDATION_FAILED
 */
export function parseAllowList(text: string | readonly string[] | undefined): string[] {
  const entries = (typeof text === 'string' ? text.split(',') : (text ?? []))
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e !== '');
  for (const entry of entries) addEntry({ hosts: new Set(), networks: new BlockList() }, entry);
  return [...new Set(entries)];
}

function addEntry(into: ParsedAllow, entry: string): void {
  const [address, prefixText, extra] = entry.replace(/^\[|\]$/g, '').split('/');
  const version = isIP(address!);
  if (version !== 0 && extra === undefined) {
    const family = version === 4 ? 'ipv4' : 'ipv6';
    const max = version === 4 ? 32 : 128;
    const prefix = prefixText === undefined ? max : Number(prefixText);
    if (Number.isInteger(prefix) && prefix >= 0 && prefix <= max && prefixText !== '') {
      into.networks.addSubnet(address!, prefix, family);
      return;
    }
  } else if (
    prefixText === undefined &&
    /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/.test(entry)
  ) {
    into.hosts.add(entry.replace(/\.$/, ''));
    return;
  }
  throw new FreeLoaderError(
    'VALIDATION_FAILED',
    `source allow list: "${entry}" is neither a hostname, an IP address nor a CIDR (e.g. 10.0.0.0/8)`,
    { entry },
  );
}

/**
 * Which addresses sources may connect to. Public addresses always; loopback, private,
 * link-local, multicast, unique-local, unspecified, CGNAT and cloud-metadata addresses only when
 * the host or a network holding the address is on the allow list. The check runs on the address
 * actually connected to: {@link lookup} is the DNS hook every source connection uses, so a name
 * that resolves to a public address for a probe and to 127.0.0.1 for the import (DNS rebinding)
 * is refused at the import; IP literals and every redirect are checked by {@link assertUrl}.
 *
 * The allow list is the union of fixed entries (the environment, given at construction) and
 * entries that change at run time ({@link setShared}: the admin's setting the manager hands
 * out), so a running agent follows the console without a restart.
 *
 * @example
 *   const policy = new SourcePolicy(['127.0.0.1']);
 *   policy.refusal('localhost', '127.0.0.1') === null
 *   policy.refusal('evil.example', '10.0.0.5')?.code === 'SOURCE_FORBIDDEN'
 */
export class SourcePolicy {
  private readonly fixed: string[];
  private allowed: ParsedAllow;
  private shared: string[] = [];

  constructor(
    allow: readonly string[] = [],
    private readonly resolve: Resolve = dnsLookup,
  ) {
    this.fixed = parseAllowList(allow);
    this.allowed = build(this.fixed);
  }

  /** The strict policy plus `FREELOADER_SOURCE_ALLOW` from `env`. */
  static fromEnv(env: NodeJS.ProcessEnv = process.env): SourcePolicy {
    return new SourcePolicy(parseAllowList(env[SOURCE_ALLOW_ENV]));
  }

  /** Replace the run-time part of the allow list (entries already vetted). */
  setShared(entries: readonly string[]): void {
    const next = parseAllowList(entries);
    if (next.join(',') === this.shared.join(',')) return;
    this.shared = next;
    this.allowed = build([...this.fixed, ...next]);
  }

  /** Every entry in force: the fixed ones, then the shared ones. */
  entries(): string[] {
    return [...new Set([...this.fixed, ...this.shared])];
  }

  /** The error refusing `hostname` at `address`, or null when the connection may proceed. */
  refusal(hostname: string, address: string): FreeLoaderError | null {
    const kind = forbiddenKind(address);
    if (kind === null) return null;
    const host = hostname
      .replace(/^\[|\]$/g, '')
      .toLowerCase()
      .replace(/\.$/, '');
    if (this.allowed.hosts.has(host)) return null;
    const plain = address.replace(/^\[|\]$/g, '');
    const ip = unmapIpv4(plain);
    if (this.allowed.networks.check(ip, isIP(ip) === 6 ? 'ipv6' : 'ipv4')) return null;
    const where = host === plain ? plain : `${host} (${plain})`;
    return new FreeLoaderError(
      'SOURCE_FORBIDDEN',
      `source ${where} is a ${kind} address, which sources may not reach; an admin allows it ` +
        `by adding "${host}" or a network holding ${plain} to the source allow list ` +
        `(console Settings, or ${SOURCE_ALLOW_ENV} on the manager and agents)`,
      { host, address: plain, kind, allowWith: SOURCE_ALLOW_ENV },
    );
  }

  /** Throw SOURCE_FORBIDDEN when `url`'s host is an IP literal this policy refuses. */
  assertUrl(url: URL): void {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) === 0) return;
    const refused = this.refusal(host, host);
    if (refused) throw refused;
  }

  /**
   * The `lookup` for `net.connect` / undici's `connect` option: resolves every address of the
   * name and refuses the connection when any of them is forbidden (so the answer cannot be
   * steered to the one private address among public ones).
   */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    this.resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses ?? [];
      for (const a of list) {
        const refused = this.refusal(hostname, a.address);
        if (refused) return callback(refused, '', 0);
      }
      if (list.length === 0) {
        const none = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
          code: 'ENOTFOUND',
        });
        return callback(none, '', 0);
      }
      if (options.all) {
        (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      } else {
        callback(null, list[0]!.address, list[0]!.family);
      }
    });
  };
}

function build(entries: readonly string[]): ParsedAllow {
  const parsed: ParsedAllow = { hosts: new Set(), networks: new BlockList() };
  for (const entry of entries) addEntry(parsed, entry);
  return parsed;
}

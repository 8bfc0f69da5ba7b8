import { hostname, networkInterfaces } from 'node:os';
import { forbiddenKind } from '@freeloader/sources';

/** Listen addresses that mean "every interface". */
const WILDCARDS = new Set(['0.0.0.0', '::', '[::]', '']);

/**
 * Whether the manager listening on `host` is reachable from this machine only.
 *
 * @example isLoopbackHost('127.0.0.1') // true
 * @example isLoopbackHost('0.0.0.0')   // false
 */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || forbiddenKind(h) === 'loopback';
}

/**
 * The names the manager's certificate must carry when it listens on `host`: this machine's
 * host name, localhost and the loopback addresses (the manager's own CLI), the listen address
 * itself, or every interface's address when it listens on all of them, plus the admin's
 * `extra` names (a DNS alias agents use). Sorted and deduplicated, so a restart with the same
 * network asks for the same certificate.
 *
 * @example serverNames('10.0.0.5', ['cache.lab']) // ['10.0.0.5', '127.0.0.1', '::1', 'cache.lab', 'localhost', 'ws-17']
 */
export function serverNames(host: string, extra: readonly string[] = []): string[] {
  const names = new Set<string>([hostname().toLowerCase(), 'localhost', '127.0.0.1', '::1']);
  const h = host.replace(/^\[|\]$/g, '');
  if (WILDCARDS.has(h)) {
    for (const list of Object.values(networkInterfaces())) {
      for (const i of list ?? []) {
        // Link-local IPv6 needs a zone id to be dialled: no client names the manager by it.
        if (!(i.family === 'IPv6' && i.address.toLowerCase().startsWith('fe80'))) {
          names.add(i.address);
        }
      }
    }
  } else {
    names.add(h.toLowerCase());
  }
  for (const n of extra) names.add(n.toLowerCase());
  return [...names].sort();
}

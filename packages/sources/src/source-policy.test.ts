import { lookup } from 'node:dns';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { forbiddenKind, unmapIpv4 } from './address-ranges.js';
import { HttpSource } from './http-source.js';
import { parseAllowList, SourcePolicy, type Resolve } from './source-policy.js';
import { startTestServer } from './test-server.js';

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(cleanup.splice(0).map((f) => f()));
});

/**
 * A resolver answering the names in `table` itself (no DNS traffic leaves the machine); other
 * names (`localhost`) go to the system's resolver, which answers them from /etc/hosts.
 */
function fakeDns(table: Record<string, string>): Resolve {
  return (hostname, options, callback) => {
    const address = table[hostname];
    if (address === undefined) {
      lookup(hostname, options, callback);
    } else {
      setImmediate(() => callback(null, [{ address, family: address.includes(':') ? 6 : 4 }]));
    }
  };
}

describe('forbiddenKind', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'metadata'],
    ['169.254.10.10', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.251', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['fd00:ec2::254', 'metadata'],
    ['fe80::1', 'link-local'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:a00:1', 'private'],
    ['::127.0.0.1', 'reserved'],
    ['[::1]', 'loopback'],
    ['8.8.8.8', null],
    ['172.32.0.1', null],
    ['100.128.0.1', null],
    ['2001:db8::1', null],
    ['2606:4700::1111', null],
  ])('%s → %s', (address, kind) => {
    expect(forbiddenKind(address)).toBe(kind);
  });

  it('reads IPv4-mapped addresses in both notations', () => {
    expect(unmapIpv4('::ffff:7f00:1')).toBe('127.0.0.1');
    expect(unmapIpv4('::ffff:0:c0a8:101')).toBe('192.168.1.1');
    expect(unmapIpv4('2001:db8::1')).toBe('2001:db8::1');
  });
});

describe('parseAllowList', () => {
  it.each([
    ['', []],
    ['localhost, 10.0.0.0/8 ,::1', ['localhost', '10.0.0.0/8', '::1']],
    ['Data.Lab.Internal.', ['data.lab.internal.']],
    ['fc00::/7,127.0.0.1/32', ['fc00::/7', '127.0.0.1/32']],
  ])('%j → %j', (text, entries) => {
    expect(parseAllowList(text)).toEqual(entries);
  });

  it.each(['10.0.0.0/33', '::1/129', 'bad host', 'http://x', '10.0.0.0/', '1.2.3.4/8/9'])(
    '%s is refused',
    (text) => {
      expect(() => parseAllowList(text)).toThrow(
        expect.objectContaining({ code: 'VALIDATION_FAILED' }),
      );
    },
  );
});

describe('SourcePolicy.refusal', () => {
  it.each<[string[], string, string, boolean]>([
    [[], 'x.example.test', '127.0.0.1', false],
    [[], 'x.example.test', '93.184.215.14', true],
    [['x.example.test'], 'x.example.test', '127.0.0.1', true],
    [['X.Example.Test'], 'x.example.test.', '10.0.0.1', true],
    [['10.0.0.0/8'], 'y.example.test', '10.9.9.9', true],
    [['10.0.0.0/8'], 'y.example.test', '192.168.0.1', false],
    [['127.0.0.0/8'], '::ffff:127.0.0.1', '::ffff:127.0.0.1', true],
    [['::1'], '::1', '::1', true],
    [['fc00::/7'], 'v6.example.test', 'fd00:ec2::254', true],
  ])('allow %j: %s at %s → allowed %s', (allow, host, address, allowed) => {
    const refused = new SourcePolicy(allow).refusal(host, address);
    expect(refused === null).toBe(allowed);
    if (refused) expect(refused.code).toBe('SOURCE_FORBIDDEN');
  });

  it('says how an admin allows the host', () => {
    const e = new SourcePolicy().refusal('x.example.test', '169.254.169.254')!;
    expect(e.message).toMatch(/metadata address/);
    expect(e.message).toMatch(/FREELOADER_SOURCE_ALLOW/);
    expect(e.message).toMatch(/"x\.example\.test"/);
  });

  it('follows the shared (admin) part of the allow list at run time', () => {
    const policy = new SourcePolicy(['10.0.0.0/8']);
    expect(policy.refusal('h', '192.168.0.1')).not.toBeNull();
    policy.setShared(['192.168.0.0/16']);
    expect(policy.refusal('h', '192.168.0.1')).toBeNull();
    expect(policy.entries()).toEqual(['10.0.0.0/8', '192.168.0.0/16']);
    policy.setShared([]);
    expect(policy.refusal('h', '192.168.0.1')).not.toBeNull();
  });
});

/** An HTTP server on loopback that redirects every request to `location()`. */
async function redirector(location: () => string): Promise<string> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(302, { location: location() }).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanup.push(() => new Promise((r) => server.close(r)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('HttpSource under a policy (real connections on loopback)', () => {
  async function probe(uri: string, policy: SourcePolicy) {
    const src = new HttpSource(new URL(uri), { policy, connectTimeoutMs: 5_000 });
    cleanup.push(() => src.close());
    return src.probe();
  }

  it.each([
    ['an IPv4 loopback literal', (port: number) => `http://127.0.0.1:${port}/data.bin`],
    ['the IPv6 loopback literal', (port: number) => `http://[::1]:${port}/data.bin`],
    ['localhost', (port: number) => `http://localhost:${port}/data.bin`],
    ['a name resolving to loopback', (port: number) => `http://data.example.test:${port}/d`],
  ])('refuses %s, then allows it once the admin allows it', async (_name, uriOf) => {
    const srv = await startTestServer({ size: 1000 });
    cleanup.push(() => srv.close());
    const port = Number(new URL(srv.url).port);
    const uri = uriOf(port);
    const dns = fakeDns({ 'data.example.test': '127.0.0.1' });
    await expect(probe(uri, new SourcePolicy([], dns))).rejects.toMatchObject({
      code: 'SOURCE_FORBIDDEN',
    });
    expect(srv.requests).toBe(0);
    const allowed = await probe(uri, new SourcePolicy([new URL(uri).hostname], dns)).catch(
      (e: unknown) => e,
    );
    // ::1 may not be served (the test server listens on 127.0.0.1): refused no more is the point.
    expect(allowed).not.toMatchObject({ code: 'SOURCE_FORBIDDEN' });
    if (!uri.includes('[::1]')) expect(allowed).toMatchObject({ size: 1000 });
  });

  it('refuses a redirect to loopback from an allowed host', async () => {
    const srv = await startTestServer({ size: 1000 });
    cleanup.push(() => srv.close());
    const from = await redirector(() => srv.url);
    const dns = fakeDns({ 'public.example.test': '127.0.0.1' });
    const uri = `http://public.example.test:${new URL(from).port}/d`;
    const policy = new SourcePolicy(['public.example.test'], dns);
    await expect(probe(uri, policy)).rejects.toMatchObject({ code: 'SOURCE_FORBIDDEN' });
    expect(srv.requests).toBe(0);
    policy.setShared(['127.0.0.1']);
    await expect(probe(uri, policy)).resolves.toMatchObject({ size: 1000 });
  });

  it('refuses a name that turns private between probe and read (DNS rebinding)', async () => {
    const srv = await startTestServer({ size: 4096 });
    cleanup.push(() => srv.close());
    let answer = '127.0.0.1';
    const dns: Resolve = (host, opts, cb) =>
      fakeDns({ 'flip.example.test': answer })(host, opts, cb);
    const policy = new SourcePolicy([], dns);
    // The probe is allowed by address; the read's new connection resolves to a refused one.
    policy.setShared(['127.0.0.1']);
    const src = new HttpSource(new URL(`http://flip.example.test:${new URL(srv.url).port}/d`), {
      policy,
      connections: 1,
    });
    cleanup.push(() => src.close());
    const info = await src.probe();
    policy.setShared([]);
    answer = '10.0.0.7';
    await src.close();
    const again = new HttpSource(new URL(src.uri), { policy, connections: 1 });
    cleanup.push(() => again.close());
    await expect(again.readRange(0, 100, info)).rejects.toMatchObject({
      code: 'SOURCE_FORBIDDEN',
    });
  });
});
